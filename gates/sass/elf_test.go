package sass

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// listELFCases are cuobjdump --list-elf (and --list-ptx) outputs and what they list: real
// captures (file, under testdata/) and made-up ones of the documented form "ELF file    1:
// NAME.sm_XX.cubin" (the CUDA Binary Utilities guide, "Listing and Extracting Embedded
// Binaries"). A new capture goes in as a line with file set.
var listELFCases = []struct {
	name, file, input string
	want              Listing
	err               string // a part of the error, "" for none
}{
	// Real captures (kernels/forms/capture.sh on the H200, CUDA 13.0): each file lists one or
	// more binaries, "## PATH" before each.
	{name: "cmake executable", file: "forms-h200/cmake-list-elf.txt",
		want: Listing{Files: []Embedded{{Kind: "ELF", Index: 1, Name: "harness.sm_90.cubin", Arch: "sm_90"}}}},
	{name: "setup.py extension", file: "forms-h200/setup-list-elf.txt",
		want: Listing{Files: []Embedded{{Kind: "ELF", Index: 1, Name: "flash_fwd_ext.sm_90a.cubin", Arch: "sm_90a"}}}},
	{name: "load() extension", file: "forms-h200/torch-load-list-elf.txt",
		want: Listing{Files: []Embedded{{Kind: "ELF", Index: 1, Name: "flash_fwd_ext.sm_90a.cubin", Arch: "sm_90a"}}}},
	{name: "Triton cubin", file: "forms-h200/triton-list-elf.txt",
		want: Listing{Files: []Embedded{{Kind: "ELF", Index: 1, Name: "row_softmax_triton.sm_90a.cubin", Arch: "sm_90a"}}}},
	{name: "sm_80 SASS and PTX, then PTX only", file: "forms-h200/sm80-list-elf.txt",
		want: Listing{Files: []Embedded{{Kind: "ELF", Index: 1, Name: "flash_fwd.sm_80.cubin", Arch: "sm_80"}, {Kind: "ELF", Index: 2, Name: "flash_fwd.sm_80.cubin", Arch: "sm_80"}}}},
	{name: "PTX only", input: "cuobjdump info    : No ELF file found to extract from '/tmp/kg-capture.QQwtes/sm80-ptx-only.so'. You may try with -all option.\n",
		want: Listing{}},
	// The documented form, with the index in the name as older releases print it.
	{name: "one arch", input: "ELF file    1: kg_ext.1.sm_90.cubin\n",
		want: Listing{Files: []Embedded{{Kind: "ELF", Index: 1, Name: "kg_ext.1.sm_90.cubin", Arch: "sm_90"}}}},
	{name: "several archs, PTX too, a shell echo", input: "+ cuobjdump --list-elf --list-ptx build/libattn.so\n" +
		"ELF file    1: libattn.1.sm_80.cubin\nELF file    2: libattn.2.sm_90a.cubin\nELF file   10: libattn.10.sm_100f.cubin\n" +
		"PTX file    1: libattn.1.sm_90.ptx\n",
		want: Listing{Files: []Embedded{
			{Kind: "ELF", Index: 1, Name: "libattn.1.sm_80.cubin", Arch: "sm_80"},
			{Kind: "ELF", Index: 2, Name: "libattn.2.sm_90a.cubin", Arch: "sm_90a"},
			{Kind: "ELF", Index: 10, Name: "libattn.10.sm_100f.cubin", Arch: "sm_100f"},
			{Kind: "PTX", Index: 1, Name: "libattn.1.sm_90.ptx", Arch: "sm_90"}}}},
	{name: "CRLF", input: "ELF file    1: a.1.sm_89.cubin\r\n",
		want: Listing{Files: []Embedded{{Kind: "ELF", Index: 1, Name: "a.1.sm_89.cubin", Arch: "sm_89"}}}},
	{name: "a name without an arch", input: "ELF file    1: module.cubin\n",
		want: Listing{Files: []Embedded{{Kind: "ELF", Index: 1, Name: "module.cubin"}}}},
	{name: "host code only", input: "cuobjdump info    : File '/x/libhost.so' does not contain device code\n",
		want: Listing{NoDeviceCode: true}},
	{name: "empty", input: "", want: Listing{}},
	{name: "fatal", input: "cuobjdump fatal   : Could not open input file 'x.so'\n", err: "Could not open input file"},
	{name: "error after files", input: "ELF file    1: a.1.sm_90.cubin\ncuobjdump error   : bad fatbin\n", err: "bad fatbin"},
	{name: "garbled line", input: "ELF file    x: a.cubin\n", err: `is not "ELF file N: NAME"`},
	{name: "no name", input: "ELF file    1: \n", err: "is not"},
	{name: "a carriage return inside the name", input: "ELF file    1: a.1\r.sm_90.cubin\n", err: "a control character in the file name"},
	{name: "cut last line", input: "ELF file    1: a.1.sm_90.cubin\nELF file    2: a.2.sm_9", err: "the listing is cut"},
	{name: "files and no device code", input: "ELF file    1: a.1.sm_90.cubin\ncuobjdump info    : File 'x' does not contain device code\n", err: "also says"},
}

func TestParseListELF(t *testing.T) {
	for _, tc := range listELFCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.input)
			if tc.file != "" {
				in = readFile(t, testdata(tc.file))
			}
			got, err := ParseListELF(bytes.NewReader(in))
			switch {
			case tc.err != "":
				if err == nil || !errors.Is(err, ErrListing) || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err %v, want ErrListing with %q", err, tc.err)
				}
			case err != nil:
				t.Fatal(err)
			case !reflect.DeepEqual(got, tc.want):
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestListingArchs(t *testing.T) {
	var input string
	for _, tc := range listELFCases {
		if tc.name == "several archs, PTX too, a shell echo" {
			input = tc.input
		}
	}
	l, err := ParseListELF(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Archs("ELF"); !reflect.DeepEqual(got, []string{"sm_80", "sm_90a", "sm_100f"}) {
		t.Errorf("ELF archs %q", got)
	}
	if got := l.Archs("PTX"); !reflect.DeepEqual(got, []string{"sm_90"}) {
		t.Errorf("PTX archs %q", got)
	}
}

// On the recorded spill build the SASS's STL and LDL bytes equal what ptxas printed as the
// spill stores and loads of the same kernels (head/attention/compile/2.log, flash_fwd.cu's
// compile: 1676 and 1684, 1704 and 1744 bytes on sm_90a), and the clean build has none.
func TestLocalAccessMatchesPtxasSpills(t *testing.T) {
	read := func(c string) *Dump {
		f, err := os.Open(testdata("replay", c, "head", "attention", "sass.txt.gz"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Parse(z, ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	want := map[string]LocalAccess{
		"kg::flash_fwd<64, 64, false>": {Loads: 315, Stores: 295, LoadBytes: 1684, StoreBytes: 1676},
		"kg::flash_fwd<64, 64, true>":  {Loads: 328, Stores: 302, LoadBytes: 1744, StoreBytes: 1704},
	}
	seen := 0
	for _, fn := range read("spill").Functions {
		a := fn.LocalAccess()
		if w, ok := want[fn.Name.Short]; ok && fn.Arch == "sm_90a" {
			seen++
			if a != w {
				t.Errorf("%s: %+v, want %+v", fn.Name.Short, a, w)
			}
		} else if a != (LocalAccess{}) {
			t.Errorf("%s (%s): %+v, want none", fn.Name.Short, fn.Arch, a)
		}
	}
	if seen != 2 {
		t.Errorf("%d of the 2 spilling kernels found", seen)
	}
	for _, fn := range read("clean").Functions {
		if a := fn.LocalAccess(); a != (LocalAccess{}) {
			t.Errorf("clean %s (%s): %+v", fn.Name.Short, fn.Arch, a)
		}
	}
}

func TestLocalWidth(t *testing.T) {
	fn := Function{Opcodes: map[string]int{"STL.U8": 1, "STL.S16": 1, "STL": 2, "STL.64": 1, "STL.128": 1, "LDL.LU.64": 3, "LDL": 1, "LDG.E.128": 9, "LDLX": 4}}
	if got, want := fn.LocalAccess(), (LocalAccess{Loads: 4, Stores: 6, LoadBytes: 28, StoreBytes: 1 + 2 + 8 + 8 + 16}); got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
}

func FuzzParseListELF(f *testing.F) {
	for _, tc := range listELFCases {
		if tc.file != "" {
			f.Add(readFile(f, testdata(tc.file)))
		} else {
			f.Add([]byte(tc.input))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		l, err := ParseListELF(bytes.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrListing) && !strings.Contains(err.Error(), "read") {
				t.Fatalf("error %v is not ErrListing", err)
			}
			if !reflect.DeepEqual(l, Listing{}) {
				t.Fatalf("an error with a listing: %+v", l)
			}
			return
		}
		for _, e := range l.Files {
			if e.Index <= 0 || e.Name == "" || (e.Kind != "ELF" && e.Kind != "PTX") || strings.ContainsAny(e.Name, "\n\r") {
				t.Fatalf("entry %+v", e)
			}
			if e.Arch != "" && !strings.Contains(e.Name, e.Arch) {
				t.Fatalf("arch %q not in %q", e.Arch, e.Name)
			}
		}
		if l.NoDeviceCode && len(l.Files) > 0 {
			t.Fatal("files and no device code")
		}
		l2, err2 := ParseListELF(iotest.OneByteReader(bytes.NewReader(in)))
		if err2 != nil || !reflect.DeepEqual(l, l2) {
			t.Fatalf("one-byte reads differ: %v", err2)
		}
	})
}
