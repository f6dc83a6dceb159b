package pdfsign

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	"github.com/quire-dev/quire/internal/pdf"
)

// revisions are the states a file went through, each read as the prefix
// of the file that ends where it ends, and the changes each made to the
// one before it: what every signature's verdict compares.
type revisions struct {
	ctx   context.Context
	b     []byte
	final *pdf.Document // the whole file as read (or its newest readable prefix)
	lim   pdf.Limits
	docs  map[int]*pdf.Document // by end; nil: that prefix does not read
	roles map[int]*roles        // by end
	ends  []int                 // readable revision ends, oldest first; the last is the final document's
	made  map[int][]change      // by end: what that revision changed in the one before it
	tail  *change               // bytes after the final document that no reader reaches
	admit func(objects int) error
	stop  error // the caller's refusal of a revision's cost, which ends the verification
}

// newRevisions prepares the revisions of b, whose newest readable state
// d ends at end (len(b) unless a later update could not be read).
// admit (nil: none) is told the object count of each earlier revision
// read, for the caller's memory budget.
func newRevisions(ctx context.Context, b []byte, d *pdf.Document, end int, lim pdf.Limits, admit func(objects int) error) *revisions {
	r := &revisions{ctx: ctx, b: b, final: d, lim: lim, docs: map[int]*pdf.Document{end: d}, roles: map[int]*roles{}, made: map[int][]change{}, admit: admit}
	revs := d.Revisions()
	last := end
	if n := len(revs); n > 0 && revs[n-1] < end {
		last = revs[n-1] // the final document's own cross-reference ends there
	}
	if rest := bytes.TrimRight(b[last:], " \t\r\n\f\x00"); len(rest) > 0 {
		ch := other(0, 0, fmt.Sprintf("%d bytes after the last revision, outside every cross-reference section: an update that readers which repair files would show", len(b)-last))
		r.tail = &ch
	}
	for _, e := range revs {
		if e < last {
			r.ends = append(r.ends, e)
		}
	}
	r.ends = append(r.ends, end)
	return r
}

// doc reads the revision that ends at end.
func (r *revisions) doc(end int) (*pdf.Document, error) {
	if d, ok := r.docs[end]; ok {
		if d == nil {
			return nil, fmt.Errorf("%w: the bytes up to %d are not a readable revision", pdf.ErrUnreadable, end)
		}
		return d, nil
	}
	lim := r.lim
	lim.MaxInputSize = max(lim.MaxInputSize, int64(len(r.b)))
	d, err := pdf.Read(r.b[:end], lim)
	if err != nil {
		r.docs[end] = nil
		return nil, err
	}
	if r.admit != nil {
		if err := r.admit(d.ObjectCount()); err != nil {
			r.stop = err
			return nil, err
		}
	}
	r.docs[end] = d
	return d, nil
}

// rolesOf walks the revision that ends at end.
func (r *revisions) rolesOf(end int) (*roles, error) {
	if ro, ok := r.roles[end]; ok {
		return ro, nil
	}
	d, err := r.doc(end)
	if err != nil {
		return nil, err
	}
	ro, err := buildRoles(r.ctx, d)
	if err != nil {
		return nil, err
	}
	r.roles[end] = ro
	return ro, nil
}

// addSignedRevision makes end, where a signature's bytes end, one of the
// revisions compared, when it reads.
func (r *revisions) addSignedRevision(end int) {
	if slices.Contains(r.ends, end) || end > r.ends[len(r.ends)-1] {
		return
	}
	if _, err := r.doc(end); err != nil {
		return
	}
	i, _ := slices.BinarySearch(r.ends, end)
	r.ends = slices.Insert(r.ends, i, end)
}

// after returns every change made in the revisions after the one that
// ends at end, oldest first. Revisions that do not read (a linearized
// file's first part) are skipped; a change between readable ones is
// still found, as the later one differs from the earlier.
func (r *revisions) after(end int) ([]change, error) {
	var out []change
	prev := end
	for _, e := range r.ends {
		if e <= end {
			continue
		}
		if _, err := r.doc(e); err != nil {
			continue
		}
		made, ok := r.made[e]
		if !ok {
			ra, err := r.rolesOf(prev)
			if err != nil {
				return nil, err
			}
			rb, err := r.rolesOf(e)
			if err != nil {
				return nil, err
			}
			if err := r.ctx.Err(); err != nil {
				return nil, err
			}
			made = diffRevisions(r.docs[prev], r.docs[e], ra, rb)
			r.made[e] = made
		}
		out = append(out, made...)
		prev = e
	}
	if r.tail != nil {
		out = append(out, *r.tail)
	}
	return out, nil
}
