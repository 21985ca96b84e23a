package sass

import "strings"

// LocalAccess is a function's local-memory instructions in its SASS: LDL loads and STL
// stores, each counted once however often it runs, with the bytes each moves by its width
// modifier (.U8/.S8 1, .U16/.S16 2, none 4, .64 8, .128 16). ptxas counts spills the same
// way ("N bytes spill stores": the static stores it added), so where a record has no spill
// figure (cuobjdump --dump-resource-usage prints none) these stand in for it; they also
// count a local array's loads and stores, which ptxas does not call spills.
type LocalAccess struct {
	Loads, Stores         int64
	LoadBytes, StoreBytes int64
}

// LocalAccess counts f's LDL and STL instructions.
func (f Function) LocalAccess() LocalAccess {
	var a LocalAccess
	for op, n := range f.Opcodes {
		base, mods, _ := strings.Cut(op, ".")
		if base != "LDL" && base != "STL" {
			continue
		}
		bytes := int64(n) * localWidth(mods)
		if base == "LDL" {
			a.Loads += int64(n)
			a.LoadBytes += bytes
		} else {
			a.Stores += int64(n)
			a.StoreBytes += bytes
		}
	}
	return a
}

// localWidth is the bytes one LDL or STL moves, from its modifiers ("LU.64", "128", "U8").
func localWidth(mods string) int64 {
	w := int64(4)
	for _, m := range strings.Split(mods, ".") {
		switch m {
		case "U8", "S8":
			w = 1
		case "U16", "S16":
			w = 2
		case "64":
			w = 8
		case "128":
			w = 16
		}
	}
	return w
}
