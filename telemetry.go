package quire

import "time"

// CommunityLicenseKey is the license key of community and evaluation use,
// applied when a client sends none (spec 5).
const CommunityLicenseKey = "community-and-eval-agplv3"

// OpenEvent is one document open reported by an editor library, as
// stored: what the client sent that is needed for billing, and when quire
// received it. Client addresses, user agents, URLs and cookies are never
// part of it.
type OpenEvent struct {
	LicenseKey        string
	DocumentID        string    // "" when the client sent none (an anonymous open)
	ReceivedAt        time.Time // counts are by receipt time: clients' clocks are not trusted for billing
	OccurredAt        string    // the client's timestamp, verbatim
	DocumentCreatedAt *string   // nil when the client sent null or nothing
	LibraryVersion    string
	Hostname          string
	OtherHost         bool   // the license lists hosts and Hostname is not one of them, when received
	Metadata          string // a JSON object, size-capped
}

// License is a commercial license key, tied to an organization and the
// e-mail address of its contact.
type License struct {
	ID           string
	Key          string
	Organization string
	Email        string
	Hosts        []string // the customer's own hosts; opens from others are counted apart; none: every host is its own
	CreatedAt    time.Time
	RevokedAt    time.Time // zero while active
}

// Day is the UTC day of t, counted from 1970-01-01; usage is recorded per day.
func Day(t time.Time) int64 { return t.UTC().Unix() / 86400 }

// DayStart is the start of day d.
func DayStart(d int64) time.Time { return time.Unix(d*86400, 0).UTC() }

// Month is the UTC month of t as year*12 + month-1.
func Month(t time.Time) int64 {
	t = t.UTC()
	return int64(t.Year())*12 + int64(t.Month()) - 1
}

// MonthStart is the start of month m.
func MonthStart(m int64) time.Time {
	return time.Date(int(m/12), time.Month(m%12+1), 1, 0, 0, 0, 0, time.UTC)
}

// UsageRow is the usage of one license key in one period: a day (Day) or
// a month (Month) number.
type UsageRow struct {
	LicenseKey      string
	Period          int64
	NewDocuments    int64
	ActiveDocuments int64
	Opens           int64
	AnonymousOpens  int64 // opens without a document id, part of Opens
	OtherHostOpens  int64 // opens from hosts not of the license's list, part of Opens
}
