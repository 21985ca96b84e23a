package kernelname

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Name is a kernel's name in the forms a user may write a pattern against.
type Name struct {
	Mangled   string // as printed by ptxas / cuobjdump
	Demangled string // full signature, e.g. "void kg::flash_fwd<64, 64, false>(__half const*, ...)"
	Short     string // without return type and parameters, e.g. "kg::flash_fwd<64, 64, false>"
	Base      string // Short without its namespaces or classes, e.g. "flash_fwd<64, 64, false>"
}

// Parse demangles a name; a name that is not a mangled C++ name is kept as it is.
func Parse(mangled string) Name {
	n := Name{Mangled: mangled, Demangled: mangled, Short: mangled, Base: mangled}
	// The demangler accepts some malformed names and returns nothing for them ("_Z1 ").
	if full, err := demangle.ToString(mangled); err == nil && strings.TrimSpace(full) != "" {
		n.Demangled = full
	}
	if short, err := demangle.ToString(mangled, demangle.NoParams); err == nil && strings.TrimSpace(short) != "" {
		n.Short = stripInternal(stripReturnType(short))
	}
	if strings.TrimSpace(n.Short) == "" {
		n.Short = n.Demangled // malformed input the demangler half-accepted
	}
	n.Base = stripScope(n.Short)
	if strings.TrimSpace(n.Base) == "" {
		n.Base = n.Short // "ns::" alone: nothing after the scope to call a name
	}
	return n
}

// Identity is what names the same function in two builds of the same sources: the
// demangled signature, without the per-translation-unit hash that nvcc puts in the
// namespaces of internal-linkage symbols. An anonymous namespace demangles to "(anonymous
// namespace)" whatever its hash, but the mangled name carries the hash, and the hash
// depends on the file's path: the same kernel built in the base worktree and in the
// checkout has two mangled names.
func (n Name) Identity() string {
	s := n.Demangled
	for {
		i := strings.Index(s, "_INTERNAL_")
		if i < 0 || (i > 0 && isIdent(s[i-1])) {
			return s
		}
		j := strings.Index(s[i:], "::")
		if j < 0 {
			return s
		}
		s = s[:i] + s[i+j+2:]
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// stripReturnType drops a leading "void " that function templates carry in demangled form.
func stripReturnType(s string) string {
	var n nesting
	for i := 0; i < len(s); i++ {
		if n.step(s[i]) && s[i] == ' ' {
			return s[i+1:]
		}
	}
	return s
}

// stripInternal drops the namespace nvcc gives internal-linkage symbols
// ("_INTERNAL_29c3d034_7_bugs_cu_004764ae::nvcuda::wmma::...") so names read as written.
func stripInternal(s string) string {
	if rest, ok := strings.CutPrefix(s, "_INTERNAL_"); ok {
		if i := strings.Index(rest, "::"); i >= 0 {
			return rest[i+2:]
		}
	}
	return s
}

// stripScope drops "ns::Class::" qualifiers outside template arguments.
func stripScope(s string) string {
	var n nesting
	cut := 0
	for i := 0; i < len(s); i++ {
		if n.step(s[i]) && s[i] == ':' && i+1 < len(s) && s[i+1] == ':' {
			cut = i + 2
			i++
		}
	}
	return s[cut:]
}

// nesting tracks template-argument and parenthesis depth. A '>' inside parentheses is a
// comparison in a template argument ("Flag<((3)>(2))>"), not a closing bracket.
type nesting struct{ angle, paren int }

// step consumes c and reports whether it stands at the top level.
func (n *nesting) step(c byte) bool {
	switch c {
	case '(':
		n.paren++
	case ')':
		n.paren--
	case '<':
		if n.paren == 0 {
			n.angle++
		}
	case '>':
		if n.paren == 0 {
			n.angle--
		}
	default:
		return n.angle == 0 && n.paren == 0
	}
	return false
}

// Matches reports whether the glob matches any form of the name.
func (n Name) Matches(g Glob) bool {
	return g.Match(n.Base) || g.Match(n.Short) || g.Match(n.Demangled) || g.Match(n.Mangled)
}

// Glob is a shell-style pattern over a whole kernel name: '*' matches any run of characters
// (including "::", "<", ",", " "), '?' exactly one character; every other character, '['
// included (C++ names contain "operator[]"), matches itself.
type Glob string

// Match reports whether s matches the whole pattern.
func (g Glob) Match(s string) bool {
	p := string(g)
	// Iterative wildcard match with single backtrack point: linear in practice, no recursion.
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// Valid reports whether the glob can be used: it must not be empty or only spaces.
func (g Glob) Valid() bool { return strings.TrimSpace(string(g)) != "" }
