package sass

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestClassOf(t *testing.T) {
	for op, want := range map[string]Class{
		"LDG.E.128.CONSTANT": GlobalLoad, "STL.64": LocalStore, "LDL": LocalLoad, "HMMA.16816.F32": TensorCore, "HGMMA.64x128x16.F32": TensorCore,
		"BAR.SYNC.DEFER_BLOCKING": Barrier, "FFMA.FTZ": FP32, "HFMA2.MMA": FP16, "DFMA": FP64, "F2FP.F16.F32.PACK_AB": Conversion,
		"BRA": Branch, "IMAD.WIDE.U32": Integer, "MUFU.EX2": Special, "MOV": OtherClass, "": OtherClass,
	} {
		if got := ClassOf(op); got != want {
			t.Errorf("ClassOf(%q) = %q, want %q", op, got, want)
		}
		if ClassOf(op).Label() == "" {
			t.Errorf("%s has no label", ClassOf(op))
		}
	}
	if Class("global loads").Label() != "" {
		t.Error("a label is not a class")
	}
}

// The mix of real dumps: every function's classes sum to its instructions, and its local
// loads and stores are LocalAccess's count of LDL and STL, its MMA the HMMA and HGMMA that
// a pattern counts.
func TestMixOfRealDumps(t *testing.T) {
	mma, err := CompilePattern("HMMA|HGMMA")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{
		"cuda13-h200/cuobjdump_sass_gemm_multi.txt", "cuda13-h200/cuobjdump_sass_flash_multi.txt",
		"cuda13-h200/nvdisasm_softmax_sm90a.txt", "cuda13-h200/cuobjdump_sass_dialects.txt",
	} {
		d := mustParse(t, readFile(t, testdata(file)), ParseOptions{})
		for _, f := range d.Functions {
			m := f.Mix()
			sum := 0
			for _, n := range m {
				sum += n
			}
			la := f.LocalAccess()
			if sum != f.Instructions || int64(m[LocalLoad]) != la.Loads || int64(m[LocalStore]) != la.Stores || m[TensorCore] != f.Count(mma) {
				t.Errorf("%s %s %s: mix %v, %d instructions, local %+v, MMA %d", file, f.Name.Short, f.Arch, m, f.Instructions, la, f.Count(mma))
			}
			if err := CheckMix(f.Instructions, m, f.ClockReads); err != nil {
				t.Errorf("%s %s: %v", file, f.Name.Short, err)
			}
		}
	}
}

// The spill recording's head (KG_FLASH_MIN_BLOCKS 16), flash_fwd on sm_90a, counted in its
// nvdisasm dump (the recording of 2026-11-27) with
//
//	zcat sass.txt.gz | awk '/^\t\.target/{a=$2} /\.section/{f=$2} a=="sm_90a" &&
//	  f ~ /^\.text\._ZN2kg9flash_fwd...if,/ && /\/\*[0-9a-f]{4}\*\/ +[@A-Z]/{...}'
//
// has 2424 instructions: 315 LDL, 295 STL, 64 HMMA, and 4 barriers (3 BAR.SYNC, 1 WARPSYNC),
// as cuobjdump --dump-sass of the recording of 2026-11-21 had.
func TestMixOfTheSpillRecording(t *testing.T) {
	z := readFile(t, testdata("replay", "spill", "head", "attention", "sass.txt.gz"))
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(zr, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range d.Functions {
		if f.Name.Mangled != "_ZN2kg9flash_fwdILi64ELi64ELb0EEEvPK6__halfS3_S3_PS1_if" || f.Arch != "sm_90a" {
			continue
		}
		found = true
		fd := f.Data()
		if fd.Instructions != 2424 || fd.Mix[LocalLoad] != 315 || fd.Mix[LocalStore] != 295 || fd.Mix[TensorCore] != 64 || fd.Mix[Barrier] != 4 {
			t.Errorf("mix %v of %d instructions", fd.Mix, fd.Instructions)
		}
	}
	if !found {
		t.Fatal("no flash_fwd on sm_90a in the recording")
	}
}

// A grep-filtered dump shows only some lines of each function: no mix, and no clock reads,
// rather than counts of what the filter kept.
func TestFilteredFunctionHasNoMix(t *testing.T) {
	d := mustParse(t, readFile(t, testdata("shared-h200-cuda13.0/sass_mma.txt")), ParseOptions{})
	for _, f := range d.Functions {
		if fd := f.Data(); !f.Filtered || fd.Mix != nil || fd.ClockReads != 0 {
			t.Errorf("%s: filtered %v, mix %v, clock reads %d", f.Name.Short, f.Filtered, fd.Mix, fd.ClockReads)
		}
	}
}

// The gate's data carries each function's mix, and ReadData reads it back unchanged.
func TestDataCarriesTheMix(t *testing.T) {
	d := mustParse(t, readFile(t, testdata("cuda13-h200/cuobjdump_sass_gemm_multi.txt")), ParseOptions{})
	g, err := Evaluate(d, Config{Require: []string{"HMMA|HGMMA"}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := ReadData(g.Data)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range data.Functions {
		want := d.Functions[i].Mix()
		if len(f.Mix) == 0 || len(f.Mix) != len(want) {
			t.Fatalf("%s %s: mix %v, want %v", f.Name, f.Arch, f.Mix, want)
		}
		for c, n := range want {
			if f.Mix[c] != n {
				t.Errorf("%s %s: %s %d, want %d", f.Name, f.Arch, c, f.Mix[c], n)
			}
		}
	}
	// gemm_wmma on sm_80, the first function: 16 HMMA, as its matches say; keys sorted.
	if want := `"matches":{"HMMA|HGMMA":16},"digest":"c4f2e3d25a23fee7409e8c30c820b5fc3ad1b6f005c88553d756979a216fe433",` +
		`"mix":{"barrier":2,"branch":23,"global_load":14,"global_store":16,"integer":286,"mma":16,"other":61,"shared_load":8,"shared_store":14}}`; !strings.Contains(string(g.Data), want) {
		t.Errorf("the data does not hold\n%s\n%.600s", want, g.Data)
	}
}

// ReadData takes the data of a result written before the mix was kept, and refuses a mix
// no dump could give: an unknown class, a negative or huge count, counts that do not sum
// to the instructions, clock reads without a mix or beyond the instructions, a key twice.
func TestReadDataRefusesABadMix(t *testing.T) {
	fn := func(body string) []byte {
		return []byte(`{"format":"cuobjdump","functions":[{"name":"_Z1kv","demangled":"k()","arch":"sm_90a","entry":null,"instructions":10,"matches":{}` + body + `}]}`)
	}
	for _, ok := range [][]byte{
		fn(``), // written before the mix was kept
		fn(`,"mix":{"global_load":4,"other":6}`),
		fn(`,"mix":{"global_load":4,"other":6},"clock_reads":2`),
		[]byte(`{}`),
		nil,
	} {
		if _, err := ReadData(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []struct{ body, why string }{
		{`,"mix":{"global_loads":10}`, `"global_loads" is not an instruction class`},
		{`,"mix":{"GLOBAL_LOAD":10}`, `is not an instruction class`},
		{`,"mix":{"global_load":-1,"other":11}`, "-1: want 0 to"},
		{`,"mix":{"global_load":2000000000,"other":-1999999990}`, "want 0 to"},
		{`,"mix":{"global_load":4,"other":5}`, "sum to 9 instructions, the function has 10"},
		{`,"mix":{"global_load":4,"other":6},"clock_reads":11`, "clock_reads 11: want 0 to its 10"},
		{`,"mix":{"global_load":4,"other":6},"clock_reads":-1`, "clock_reads -1"},
		{`,"clock_reads":1`, "clock_reads 1 without a mix"},
		{`,"mix":{"global_load":4,"global_load":6}`, "duplicate key"},
		{`,"mix":{"global_load":4.5,"other":5.5}`, "cannot unmarshal"},
		{`,"mix":[1,2]`, "cannot unmarshal"},
		{`,"mix":{"global_load":99999999999999999999}`, "cannot unmarshal"},
	} {
		_, err := ReadData(fn(bad.body))
		if !errors.Is(err, ErrBadData) || !strings.Contains(err.Error(), bad.why) {
			t.Errorf("%s: %v, want ErrBadData saying %q", bad.body, err, bad.why)
		}
	}
	huge := []byte(`{"functions":[{"name":"k","instructions":2147483648,"mix":{"other":2147483648}}]}`)
	if _, err := ReadData(huge); !errors.Is(err, ErrBadData) {
		t.Errorf("2^31 instructions: %v", err)
	}
}

func FuzzReadData(f *testing.F) {
	d := mustParse(f, readFile(f, testdata("cuda13-h200/cuobjdump_sass_cubin_softmax.txt")), ParseOptions{})
	g, err := Evaluate(d, Config{Forbid: []string{"LDL|STL"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(g.Data))
	f.Add([]byte(`{"functions":[{"name":"k","instructions":3,"mix":{"mma":1,"barrier":2},"clock_reads":1}]}`))
	f.Add([]byte(`{"functions":[{"name":"k","instructions":3,"mix":{"mma":1,"Mma":2}}]}`))
	f.Add([]byte(`{"functions":[{"name":"k","instructions":-3,"mix":{"mma":-3}}]}`))
	f.Add([]byte(`{"functions":null}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		data, err := ReadData(in)
		if err != nil {
			if !errors.Is(err, ErrBadData) {
				t.Fatalf("error without ErrBadData: %v", err)
			}
			return
		}
		// What ReadData accepts holds only known classes and counts in bounds that sum to
		// the instructions, and reads back the same after it is written.
		for _, fn := range data.Functions {
			sum := 0
			for c, n := range fn.Mix {
				if c.Label() == "" || n < 0 || n > MaxCount {
					t.Fatalf("accepted %s %d", c, n)
				}
				sum += n
			}
			if fn.Mix != nil && (sum != fn.Instructions || fn.ClockReads < 0 || fn.ClockReads > fn.Instructions) {
				t.Fatalf("accepted a mix of %d, %d instructions, %d clock reads", sum, fn.Instructions, fn.ClockReads)
			}
		}
		raw, err := json.Marshal(data)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadData(raw); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}
