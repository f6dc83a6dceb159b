package web

import (
	"context"
	"fmt"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/telemetry"
)

// apiUsage is the usage page's part on the API: each key's operations
// over the range, and its requests per day in a chart.
type apiUsage struct {
	Chart chart
	Keys  []apiKeyUsage
}

// apiKeyUsage is one key's usage over the whole range; Used is false when
// it answered nothing.
type apiKeyUsage struct {
	KeyID, Email string
	Used         bool
	Operations   []apiOperation // in the order of quire.Operations
}

type apiOperation struct {
	Name string
	quire.OperationUsage
}

// keyColours is how many bar colours the stylesheet has for keys (k0 to
// k5); more keys reuse them in turn.
const keyColours = 6

// apiUsage reads the API usage of q, day by day, as GET /v1/usage/api does.
func (p *Pages) apiUsage(ctx context.Context, q usageQuery) (*apiUsage, error) {
	rep, err := metering.Build(ctx, p.deps.APIUsage, metering.Query{UsageQuery: telemetry.UsageQuery{From: q.From, To: q.To.AddDate(0, 0, 1)}})
	if err != nil {
		return nil, err
	}
	u := &apiUsage{}
	var series []chartSeries
	var used []metering.KeyUsage
	for _, k := range rep.Keys {
		ku := apiKeyUsage{KeyID: k.KeyID, Email: k.Email, Used: len(k.Periods) > 0}
		for _, op := range quire.Operations {
			sum := apiOperation{Name: op}
			for _, pu := range k.Periods {
				sum.Add(*pu.Operations.Of(op))
			}
			ku.Operations = append(ku.Operations, sum)
		}
		u.Keys = append(u.Keys, ku)
		if ku.Used {
			series = append(series, chartSeries{Name: "requests of " + k.KeyID, Class: fmt.Sprintf("k%d", len(series)%keyColours)})
			used = append(used, k)
		}
	}
	u.Chart = newChart("API requests per key and day", q.From, q.days(), series)
	for s, k := range used {
		for _, pu := range k.Periods {
			for _, op := range quire.Operations {
				u.Chart.add(pu.Start, s, pu.Operations.Of(op).Requests)
			}
		}
	}
	u.Chart.draw()
	return u, nil
}
