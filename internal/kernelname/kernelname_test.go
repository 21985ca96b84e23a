package kernelname

import (
	"strings"
	"testing"
)

// Names are taken from real ptxas captures (testdata/cuda13, ../shared/data).
func TestParse(t *testing.T) {
	tests := []struct {
		mangled, demangled, short, base string
	}{
		{"_ZN2kg9flash_fwdILi64ELi64ELb0EEEvPK6__halfS3_S3_PS1_if",
			"void kg::flash_fwd<64, 64, false>(__half const*, __half const*, __half const*, __half*, int, float)",
			"kg::flash_fwd<64, 64, false>", "flash_fwd<64, 64, false>"},
		{"_Z9wmma_tilePK6__halfS1_Pf", "wmma_tile(__half const*, __half const*, float*)", "wmma_tile", "wmma_tile"},
		{"_Z6spillyILi512EEvPfPKf", "void spilly<512>(float*, float const*)", "spilly<512>", "spilly<512>"},
		{"_ZN2kg7flaggedILi3EEEvPfNS_6detail4FlagIXgtT_Li2EEEEPFiiiE",
			"void kg::flagged<3>(float*, kg::detail::Flag<((3)>(2))>, int (*)(int, int))",
			"kg::flagged<3>", "flagged<3>"},
		{"_ZN37_INTERNAL_29c3d034_7_bugs_cu_004764ae6nvcuda4wmma19__get_storage_valueIfffEET0_T1_",
			"float _INTERNAL_29c3d034_7_bugs_cu_004764ae::nvcuda::wmma::__get_storage_value<float, float, float>(float)",
			"nvcuda::wmma::__get_storage_value<float, float, float>", "__get_storage_value<float, float, float>"},
		{"plain_c_kernel", "plain_c_kernel", "plain_c_kernel", "plain_c_kernel"},
		{"not a name at all", "not a name at all", "not a name at all", "not a name at all"},
	}
	for _, tt := range tests {
		n := Parse(tt.mangled)
		if n.Demangled != tt.demangled || n.Short != tt.short || n.Base != tt.base {
			t.Errorf("Parse(%q) = %+v\nwant demangled %q short %q base %q", tt.mangled, n, tt.demangled, tt.short, tt.base)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	flash := Parse("_ZN2kg9flash_fwdILi64ELi64ELb0EEEvPK6__halfS3_S3_PS1_if")
	tests := []struct {
		glob string
		want bool
	}{
		{"flash_*", true},
		{"flash_fwd<64, 64, false>", true},
		{"kg::flash_fwd<*, true>", false},
		{"kg::flash_fwd<*, false>", true},
		{"*flash*", true},
		{"flash_fwd", false},
		{"_ZN2kg9flash*", true},
		{"gemm_*", false},
		{"flash_fwd<6?, 64, false>", true},
		{"*", true},
	}
	for _, tt := range tests {
		if got := flash.Matches(Glob(tt.glob)); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.glob, flash.Base, got, tt.want)
		}
	}
	if !Glob("operator[]*").Match("operator[](int)") {
		t.Error("'[' must match literally")
	}
	if Glob("a*b*c").Match("aXbXd") || !Glob("a*b*c").Match("aXXbYYc") {
		t.Error("multi-star backtracking is wrong")
	}
}

func FuzzGlob(f *testing.F) {
	f.Add("flash_*", "flash_fwd<64>")
	f.Add("*a*b*", "xxaxxbxx")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		got := Glob(pattern).Match(s)
		if pattern == s && !got {
			t.Errorf("a pattern without wildcards must match itself: %q", s)
		}
		if Glob("*").Match(s) != true {
			t.Error("* must match everything")
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add("_ZN2kg9flash_fwdILi64ELi64ELb0EEEvPK6__halfS3_S3_PS1_if")
	f.Add("_Z3fooPf")
	f.Fuzz(func(t *testing.T, s string) {
		n := Parse(s)
		if n.Mangled != s || n.Base == "" && s != "" {
			t.Errorf("Parse(%q) = %+v", s, n)
		}
	})
}

func TestStripScopeNesting(t *testing.T) {
	for in, want := range map[string]string{
		"a::b<x::y>":             "b<x::y>",
		"ns::f<((3)>(2)), n::c>": "f<((3)>(2)), n::c>",
		"f":                      "f",
		"void ns::k<1>":          "ns::k<1>", // only stripReturnType would drop "void "
	} {
		if in == "void ns::k<1>" {
			if got := stripReturnType(in); got != want {
				t.Errorf("stripReturnType(%q) = %q, want %q", in, got, want)
			}
			continue
		}
		if got := stripScope(in); got != want {
			t.Errorf("stripScope(%q) = %q, want %q", in, got, want)
		}
	}
}

// The same kernel in an anonymous namespace, built from two paths (the base worktree and
// the checkout), has two mangled names and one identity; real names from the H200 builds.
func TestIdentityIgnoresPerFileHashes(t *testing.T) {
	a := Parse("_ZN43_GLOBAL__N__bc30c112_10_harness_cu_5d88324919attention_referenceEPK6__halfS2_S2_Pfiibd")
	b := Parse("_ZN43_GLOBAL__N__0f2e7a91_10_harness_cu_1c6a2b0e19attention_referenceEPK6__halfS2_S2_Pfiibd")
	if a.Mangled == b.Mangled || a.Identity() != b.Identity() || !strings.Contains(a.Identity(), "attention_reference") {
		t.Errorf("identities %q and %q", a.Identity(), b.Identity())
	}
	c := Parse("_ZN4kg_INTERNAL_29c3d034_7_bugs_cu_004764ae")
	if c.Identity() != c.Demangled {
		t.Errorf("an _INTERNAL_ inside a name must stay: %q", c.Identity())
	}
	if got := (Name{Demangled: "_INTERNAL_29c3d034_7_bugs_cu_004764ae::kg::k(int)"}).Identity(); got != "kg::k(int)" {
		t.Errorf("internal namespace kept: %q", got)
	}
	if n := Parse("_Z9flash_fwdILi64EEvPf"); n.Identity() != n.Demangled {
		t.Errorf("a plain name changed: %q", n.Identity())
	}
}
