package quire

import "context"

type tenantCtx struct{}

// WithTenant returns ctx carrying the id of the API key on whose behalf the
// work is done. Every key is a tenant: per-key limits, fair shares of the
// engines and of memory, and metering read it from the context, so that the
// domain packages need not know how the key was authenticated.
func WithTenant(ctx context.Context, keyID string) context.Context {
	return context.WithValue(ctx, tenantCtx{}, keyID)
}

// Tenant returns the key id that WithTenant put in ctx, or "" when the work
// is done for nobody in particular (the CLI, the operator, tests).
func Tenant(ctx context.Context) string {
	id, _ := ctx.Value(tenantCtx{}).(string)
	return id
}
