package fetch

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// dialContext is the Transport's only way out. It resolves the host itself,
// vets every address, and connects to a vetted IP literal, so nothing
// resolves the name again between the check and the connection (the hole
// DNS rebinding goes through). It runs for every connection, hence for
// every redirect hop as well.
//
// A name is refused as a whole when any of its addresses is forbidden,
// rather than dialing only its public ones: public hosts do not publish
// internal addresses, so a mix signals a probe or a misconfiguration, and
// refusing keeps the outcome independent of address order and fallback.
func (f *Fetcher) dialContext(ctx context.Context, network, hostport string) (net.Conn, error) {
	targets, err := f.vetted(ctx, hostport)
	if err != nil {
		return nil, err
	}
	var first error
	for _, t := range targets {
		conn, err := f.dial(ctx, network, t.String())
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// vetted resolves hostport and returns its addresses, or ErrForbiddenAddress
// when f.allow refuses any of them.
func (f *Fetcher) vetted(ctx context.Context, hostport string) ([]netip.AddrPort, error) {
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("bad port %q", portText)
	}
	addrs, err := f.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	targets := make([]netip.AddrPort, len(addrs))
	for i, a := range addrs {
		targets[i] = netip.AddrPortFrom(a.Unmap(), uint16(port))
		if !f.allow(targets[i]) {
			return nil, fmt.Errorf("%w: %s", ErrForbiddenAddress, host)
		}
	}
	return targets, nil
}
