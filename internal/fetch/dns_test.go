package fetch

import (
	"context"
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"testing"
)

// testResolver returns a pure-Go resolver whose only DNS server is a tiny
// one on 127.0.0.1 answering A and AAAA queries from zone (lower-case
// names without the final dot) and NXDOMAIN for every other name.
func testResolver(t *testing.T, zone map[string][]netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go serveDNS(pc, zone)
	server := pc.LocalAddr().String()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "udp", server)
		},
	}
}

func serveDNS(pc net.PacketConn, zone map[string][]netip.Addr) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if answer := dnsAnswer(buf[:n], zone); answer != nil {
			pc.WriteTo(answer, from)
		}
	}
}

const (
	typeA    = 1
	typeAAAA = 28
)

// dnsAnswer builds the response to the query q (RFC 1035 section 4), or nil
// when q is malformed. Only the question section of q is read; EDNS and
// other additional records are ignored.
func dnsAnswer(q []byte, zone map[string][]netip.Addr) []byte {
	name, end, ok := questionName(q)
	if !ok || end+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[end:])
	addrs, known := zone[name]
	var records [][]byte
	for _, a := range addrs {
		switch {
		case qtype == typeA && a.Is4():
			records = append(records, resourceRecord(typeA, a.AsSlice()))
		case qtype == typeAAAA && a.Is6():
			records = append(records, resourceRecord(typeAAAA, a.AsSlice()))
		}
	}
	flags := uint16(0x8180) // response, recursion desired and available, no error
	if !known {
		flags |= 3 // NXDOMAIN
	}
	out := binary.BigEndian.AppendUint16(nil, binary.BigEndian.Uint16(q))
	out = binary.BigEndian.AppendUint16(out, flags)
	out = binary.BigEndian.AppendUint16(out, 1) // one question
	out = binary.BigEndian.AppendUint16(out, uint16(len(records)))
	out = append(out, 0, 0, 0, 0) // no authority or additional records
	out = append(out, q[12:end+4]...)
	for _, r := range records {
		out = append(out, r...)
	}
	return out
}

// questionName reads the name of the first question of q and returns it
// with the offset just past it.
func questionName(q []byte) (string, int, bool) {
	var labels []string
	i := 12
	for i < len(q) {
		n := int(q[i])
		if n == 0 {
			return strings.ToLower(strings.Join(labels, ".")), i + 1, true
		}
		if n > 63 || i+1+n > len(q) {
			return "", 0, false
		}
		labels = append(labels, string(q[i+1:i+1+n]))
		i += 1 + n
	}
	return "", 0, false
}

// resourceRecord is an IN record of type typ for the question's name
// (compressed as a pointer to offset 12), with a TTL of one minute.
func resourceRecord(typ uint16, data []byte) []byte {
	r := []byte{0xc0, 12}
	r = binary.BigEndian.AppendUint16(r, typ)
	r = binary.BigEndian.AppendUint16(r, 1) // class IN
	r = binary.BigEndian.AppendUint32(r, 60)
	r = binary.BigEndian.AppendUint16(r, uint16(len(data)))
	return append(r, data...)
}
