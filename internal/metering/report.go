package metering

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/telemetry"
)

// Report is the usage report of API operations (GET /v1/usage/api, quire
// usage --api), in the shape DESIGN.md gives.
type Report struct {
	From    time.Time  `json:"from"`
	To      time.Time  `json:"to"`
	GroupBy string     `json:"groupBy"`
	Keys    []KeyUsage `json:"keys"`
}

// KeyUsage is one key's usage, period by period.
type KeyUsage struct {
	KeyID   string   `json:"keyId"`
	Email   string   `json:"email"`
	Periods []Period `json:"periods"`
}

// Period is the usage of one day or month, per operation.
type Period struct {
	Start      time.Time  `json:"start"`
	Operations Operations `json:"operations"`
}

// Operations are the counts of each metered operation.
type Operations struct {
	Convert  quire.OperationUsage `json:"convert"`
	Sign     quire.OperationUsage `json:"sign"`
	Annotate quire.OperationUsage `json:"annotate"`
	Verify   quire.OperationUsage `json:"verify"`
	PDF      quire.OperationUsage `json:"pdf"`
}

// Of returns the counts of operation op.
func (o *Operations) Of(op string) *quire.OperationUsage {
	switch op {
	case quire.OpConvert:
		return &o.Convert
	case quire.OpSign:
		return &o.Sign
	case quire.OpAnnotate:
		return &o.Annotate
	case quire.OpPDF:
		return &o.PDF
	default:
		return &o.Verify
	}
}

// Query selects a report: the range is rounded out to whole UTC days;
// Keys, when not nil, restricts it to those key ids.
type Query struct {
	telemetry.UsageQuery
}

// ParseQuery reads from, to (RFC 3339; default the current UTC month) and
// groupBy (day or month, the default), as GET /v1/usage does.
func ParseQuery(from, to, groupBy string, now time.Time) (Query, error) {
	q, err := telemetry.ParseQuery(from, to, groupBy, nil, now)
	return Query{q}, err
}

// Build sums the metering per key and period. Every key in scope is
// listed, with no periods when it answered nothing in the range.
func Build(ctx context.Context, st Store, q Query) (Report, error) {
	if !q.From.Before(q.To) {
		return Report{}, quire.Invalid("The range is empty.", quire.Detail{Field: "to", Issue: "must be after from"})
	}
	fromDay, toDay := quire.Day(q.From), quire.Day(q.To.Add(24*time.Hour-time.Nanosecond))
	rows, err := st.APIUsage(ctx, fromDay, toDay, q.ByMonth, q.Keys)
	if err != nil {
		return Report{}, fmt.Errorf("api usage: %w", err)
	}
	keys, err := st.Keys(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("api usage: %w", err)
	}
	rep := Report{From: quire.DayStart(fromDay), To: quire.DayStart(toDay), GroupBy: "day", Keys: []KeyUsage{}}
	start := quire.DayStart
	if q.ByMonth {
		rep.GroupBy, start = "month", quire.MonthStart
	}
	index := map[string]int{}
	for _, k := range keys {
		if q.Keys == nil || slices.Contains(q.Keys, k.ID) {
			index[k.ID] = len(rep.Keys)
			rep.Keys = append(rep.Keys, KeyUsage{KeyID: k.ID, Email: k.Email, Periods: []Period{}})
		}
	}
	for _, r := range rows { // sorted by key, period and operation
		i, ok := index[r.KeyID]
		if !ok { // a key deleted since: still billed
			i = len(rep.Keys)
			index[r.KeyID] = i
			rep.Keys = append(rep.Keys, KeyUsage{KeyID: r.KeyID, Periods: []Period{}})
		}
		ps := &rep.Keys[i].Periods
		if n := len(*ps); n == 0 || !(*ps)[n-1].Start.Equal(start(r.Period)) {
			*ps = append(*ps, Period{Start: start(r.Period)})
		}
		*(*ps)[len(*ps)-1].Operations.Of(r.Operation) = r.OperationUsage
	}
	slices.SortFunc(rep.Keys, func(a, b KeyUsage) int { return strings.Compare(a.KeyID, b.KeyID) })
	return rep, nil
}

// WriteCSV writes the report as CSV, one line per key, period and
// operation; a key without usage gets one line with an empty period and
// operation, so that every key of the report appears.
func WriteCSV(w io.Writer, r Report) error {
	c := csv.NewWriter(w)
	c.Write([]string{"keyId", "email", "periodStart", "operation", "requests", "documents", "pages", "inputBytes", "engineSeconds"})
	for _, k := range r.Keys {
		if len(k.Periods) == 0 {
			c.Write([]string{k.KeyID, k.Email, "", "", "0", "0", "0", "0", "0"})
		}
		for _, p := range k.Periods {
			for _, op := range quire.Operations {
				u := p.Operations.Of(op)
				c.Write([]string{k.KeyID, k.Email, p.Start.Format(time.RFC3339), op, strconv.FormatInt(u.Requests, 10),
					strconv.FormatInt(u.Documents, 10), strconv.FormatInt(u.Pages, 10), strconv.FormatInt(u.InputBytes, 10),
					strconv.FormatFloat(u.EngineSeconds, 'f', 3, 64)})
			}
		}
	}
	c.Flush()
	return c.Error()
}
