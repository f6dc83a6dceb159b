package pdftools

import (
	"maps"
	"slices"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// compact renumbers the objects of a document pdfcpu changed (a merge,
// a new outline) 1 to n, in the order they are reached from the catalog
// and then the information dictionary (a dictionary's keys in sorted
// order), and drops the objects neither reaches, setting /Size to n+1.
//
// Why: pdfcpu's merge gives the appended document's objects numbers in
// the order of a Go map (its lookupTable), and frees or leaves behind the
// appended catalog and information dictionary; its writer then writes
// only the objects it reaches but has settled /Size before, so when a
// left-behind object drew the highest numbers, the cross-reference table
// ends below /Size (qpdf: "reported number of objects is not one plus the
// highest object number"), in about one merge in ten. Numbered from the
// catalog, the result no longer depends on the map's order, and every
// number below /Size is an object written.
func compact(ctx *model.Context) error {
	// The name trees pdfcpu keeps beside the objects (merged by
	// mergeNames) are written into their dictionaries first, and then
	// dropped, so that the writer does not bind them again with the old
	// numbers.
	if err := ctx.BindNameTrees(); err != nil {
		return err
	}
	ctx.Names = map[string]*model.Node{}
	roots := []*types.IndirectRef{ctx.Root, ctx.Info}
	renum, order := map[int]int{}, []int{}
	var visit func(o types.Object)
	visit = func(o types.Object) {
		switch o := o.(type) {
		case types.IndirectRef:
			n := o.ObjectNumber.Value()
			if _, seen := renum[n]; seen {
				return
			}
			e, ok := ctx.Table[n]
			if !ok || e == nil || e.Free || e.Object == nil {
				return
			}
			renum[n] = len(order) + 1
			order = append(order, n)
			visit(e.Object)
		case types.Dict:
			for _, k := range slices.Sorted(maps.Keys(o)) {
				visit(o[k])
			}
		case types.StreamDict:
			visit(o.Dict)
		case types.Array:
			for _, v := range o {
				visit(v)
			}
		}
	}
	for _, r := range roots {
		if r != nil {
			visit(*r)
		}
	}
	table := map[int]*model.XRefTableEntry{0: model.NewFreeHeadXRefTableEntry()}
	for i, old := range order {
		e := model.NewXRefTableEntryGen0(renumbered(ctx.Table[old].Object, renum))
		e.Valid = ctx.Table[old].Valid
		table[i+1] = e
	}
	ctx.Table = table
	size := len(order) + 1
	ctx.Size = &size
	ctx.Root.ObjectNumber = types.Integer(renum[ctx.Root.ObjectNumber.Value()])
	if ctx.Info != nil {
		if n, ok := renum[ctx.Info.ObjectNumber.Value()]; ok {
			ctx.Info.ObjectNumber = types.Integer(n)
		} else {
			ctx.Info = nil // not there: pdfcpu writes a new one
		}
	}
	if root, ok := table[ctx.Root.ObjectNumber.Value()].Object.(types.Dict); ok {
		ctx.RootDict = root
	}
	// The sets of object numbers pdfcpu frees at writing (duplicates,
	// object and cross-reference streams of the inputs) name the old
	// numbers: the objects they named are gone.
	if ctx.Optimize != nil {
		ctx.Optimize.DuplicateFontObjs, ctx.Optimize.DuplicateImageObjs, ctx.Optimize.DuplicateInfoObjects = types.IntSet{}, types.IntSet{}, types.IntSet{}
	}
	ctx.LinearizationObjs = types.IntSet{}
	if ctx.Read != nil {
		ctx.Read.ObjectStreams, ctx.Read.XRefStreams = types.IntSet{}, types.IntSet{}
	}
	return nil
}

// renumbered is a copy of o with its references renumbered; a reference
// to an object that is not there (null, by the standard) is left out.
func renumbered(o types.Object, renum map[int]int) types.Object {
	switch o := o.(type) {
	case types.IndirectRef:
		n, ok := renum[o.ObjectNumber.Value()]
		if !ok {
			return nil
		}
		return *types.NewIndirectRef(n, 0)
	case types.Dict:
		d := types.Dict{}
		for k, v := range o {
			if v = renumbered(v, renum); v != nil {
				d[k] = v
			}
		}
		return d
	case types.StreamDict:
		o.Dict = renumbered(o.Dict, renum).(types.Dict)
		return o
	case types.Array:
		a := make(types.Array, len(o))
		for i, v := range o {
			a[i] = renumbered(v, renum)
		}
		return a
	}
	return o
}
