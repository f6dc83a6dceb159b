package fetch

import (
	"net/netip"
	"testing"
)

// The addresses here are only classified, never dialed.
func TestIsPublic(t *testing.T) {
	t.Parallel()
	forbidden := []string{
		// IPv4
		"0.0.0.0", "0.1.2.3", // this network
		"10.0.0.1", "10.255.255.255", // RFC 1918
		"172.16.0.1", "172.31.255.254",
		"192.168.0.1", "192.168.255.255",
		"127.0.0.1", "127.255.255.254", // loopback
		"169.254.0.1", "169.254.169.254", // link-local, cloud metadata
		"100.64.0.1", "100.127.255.254", // CGNAT
		"198.18.0.1", "198.19.255.254", // benchmarking
		"192.0.2.1", "198.51.100.1", "203.0.113.1", // documentation
		"192.0.0.8", "192.0.0.170", // IETF protocol assignments
		"192.88.99.1",                  // 6to4 relay anycast
		"224.0.0.1", "239.255.255.250", // multicast
		"240.0.0.1", "255.255.255.255", // reserved, broadcast
		// IPv6
		"::", "::1", // unspecified, loopback
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:0.0.0.0", // IPv4-mapped
		"::7f00:1", "::a00:1", "::808:808", // IPv4-compatible (deprecated, never public)
		"::ffff:0:a00:1",                                          // IPv4-translated
		"64:ff9b::7f00:1", "64:ff9b::a00:1", "64:ff9b::a9fe:a9fe", // NAT64 of forbidden IPv4
		"64:ff9b:1::808:808",                                  // local-use NAT64
		"2002:7f00:1::1", "2002:a00:1::", "2002:a9fe:a9fe::1", // 6to4 of forbidden IPv4
		"fc00::1", "fd00::1", "fd00:ec2::254", // unique local, AWS metadata
		"fe80::1", "febf::1", // link-local
		"fec0::1",            // site-local
		"ff02::1", "ff0e::1", // multicast
		"100::1",               // discard-only
		"2001::1", "2001:2::1", // Teredo, benchmarking
		"2001:db8::1", "3fff::1", // documentation
		"5f00::1",                              // SRv6 SIDs, outside 2000::/3
		"fe80::1%eth0", "2001:4860::8888%eth0", // zoned
	}
	public := []string{
		"8.8.8.8", "1.1.1.1", "93.184.215.14", "9.255.255.255", "11.0.0.1",
		"172.15.255.255", "172.32.0.1", "100.63.255.255", "100.128.0.1",
		"169.253.255.255", "198.17.255.255", "198.20.0.1", "192.169.0.1",
		"223.255.255.255",
		"::ffff:8.8.8.8", // IPv4-mapped public
		"2001:4860::8888", "2606:4700::1111", "2a00:1450:4001::200e",
		"64:ff9b::808:808", // NAT64 of a public IPv4
		"2002:808:808::1",  // 6to4 of a public IPv4
		"2001:200::1",      // just past 2001::/23
	}
	for _, s := range forbidden {
		if isPublic(netip.MustParseAddr(s)) {
			t.Errorf("%s classified public", s)
		}
	}
	for _, s := range public {
		if !isPublic(netip.MustParseAddr(s)) {
			t.Errorf("%s classified forbidden", s)
		}
	}
	if isPublic(netip.Addr{}) {
		t.Error("the zero Addr classified public")
	}
}
