package fetch

import "net/netip"

// forbidden4 lists the IPv4 ranges a download may never reach: every range
// that is not globally routable or that names this machine, its neighbours
// or its cloud provider. netip's IsPrivate and friends are not enough on
// their own: they leave out CGNAT, benchmarking, documentation and
// reserved space, all of which can hide internal services.
var forbidden4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"; 0.0.0.0 reaches the local host on Linux
	netip.MustParsePrefix("10.0.0.0/8"),      // private (RFC 1918)
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local, cloud metadata 169.254.169.254
	netip.MustParsePrefix("172.16.0.0/12"),   // private (RFC 1918)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments (RFC 6890)
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation TEST-NET-1
	netip.MustParsePrefix("192.88.99.0/24"),  // deprecated 6to4 relay anycast (RFC 7526)
	netip.MustParsePrefix("192.168.0.0/16"),  // private (RFC 1918)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking (RFC 2544)
	netip.MustParsePrefix("198.51.100.0/24"), // documentation TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation TEST-NET-3
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast 255.255.255.255
}

// IPv6 is judged by allow-list: only global unicast 2000::/3 can be public,
// which at once rules out the unspecified and loopback addresses,
// IPv4-compatible ::/96, discard 100::/64, unique local fc00::/7 (so AWS
// metadata fd00:ec2::254), link-local fe80::/10, site-local fec0::/10,
// multicast ff00::/8 and whatever IANA assigns outside 2000::/3 later.
var (
	global6 = netip.MustParsePrefix("2000::/3")
	// Addresses that embed an IPv4 address which a gateway will reach on
	// our behalf: they are as public as the address they embed.
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // well-known NAT64 prefix (RFC 6052)
	sixToFour = netip.MustParsePrefix("2002::/16")    // 6to4 (RFC 3056)
	// Special ranges inside 2000::/3.
	forbidden6 = []netip.Prefix{
		netip.MustParsePrefix("2001::/23"),     // IETF protocol assignments: Teredo, benchmarking, ORCHID
		netip.MustParsePrefix("2001:db8::/32"), // documentation
		netip.MustParsePrefix("3fff::/20"),     // documentation (RFC 9637)
	}
)

// isPublic reports whether a is a globally reachable unicast address, the
// only kind a download from a user-supplied URL may connect to. IPv4-mapped
// IPv6 addresses (::ffff:10.0.0.1) are judged as the IPv4 address they
// carry, since that is where the kernel sends them.
func isPublic(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" { // a zone only scopes link-local addresses
		return false
	}
	a = a.Unmap()
	if a.Is4() {
		return !inAny(a, forbidden4)
	}
	switch {
	case nat64.Contains(a):
		return isPublic(embedded4(a, 12))
	case sixToFour.Contains(a):
		return isPublic(embedded4(a, 2))
	}
	return global6.Contains(a) && !inAny(a, forbidden6)
}

// embedded4 returns the IPv4 address stored in bytes at..at+3 of a.
func embedded4(a netip.Addr, at int) netip.Addr {
	b := a.As16()
	return netip.AddrFrom4([4]byte(b[at : at+4]))
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
