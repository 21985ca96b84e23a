package kernelsrc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// The repository's own kernels: every __global__ and its line, as grep -n shows them.
func TestScanRealKernels(t *testing.T) {
	want := map[string]string{
		"flash_fwd.cu":      "flash_fwd:40",
		"gemm_wmma.cu":      "gemm_wmma:12",
		"softmax.cu":        "row_softmax:24",
		"harness_device.cu": "attention_reference:25 gemm_reference:51 softmax_reference:60 normal_kernel:81",
		"harness.cpp":       "",
		"harness_cases.cpp": "",
		"kg_bench.h":        "hold_stream:223",
	}
	for file, w := range want {
		path := filepath.Join("..", "..", "kernels", file)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defs, err := Scan(f, file)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range defs {
			got = append(got, d.Name+":"+strconv.Itoa(d.Line))
		}
		if strings.Join(got, " ") != w {
			t.Errorf("%s: got %q, want %q", file, strings.Join(got, " "), w)
		}
	}
}

func TestScanSkipsWhatIsNotADefinition(t *testing.T) {
	src := `// __global__ void in_comment(int x) {}
/* __global__ void
   in_block_comment() {} */
const char* s = "__global__ void in_string() {}";
#define KERNEL __global__ void in_macro()
template <typename T, int N>
__global__ void __launch_bounds__(256, 2) [[maybe_unused]]
templated(T* __restrict__ out) {}
__global__ __launch_bounds__(128) void
  attr_first(int) {}
extern "C" __global__ void c_linkage(float* p) {}
__global__ void declared_only(int);
template <> __global__ void spec<float>(float*) {}
__global__ struct not_a_function;
`
	defs, err := Scan(strings.NewReader(src), "k.cu")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range defs {
		got = append(got, d.Name+":"+strconv.Itoa(d.Line))
	}
	want := "templated:7 attr_first:9 c_linkage:11 declared_only:12 spec:13"
	if strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
}

func TestFindByToolName(t *testing.T) {
	x := Index{}
	if err := x.Add(strings.NewReader("namespace kg {\ntemplate <int M, int N, bool C>\n__global__ void __launch_bounds__(128)\nflash_fwd(const half* q) {}\n}\n"), "kernels/flash_fwd.cu"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"_ZN2kg9flash_fwdILi64ELi64ELb0EEEvPK6__halfS3_S3_PS1_if", // as ptxas prints it
		"kg::flash_fwd<64, 64, false>",                            // as the reports show it
		"flash_fwd",
	} {
		d, ok := x.Find(Identifier(kernelname.Parse(name).Short))
		if !ok || d.File != "kernels/flash_fwd.cu" || d.Line != 3 {
			t.Errorf("%s: %+v %v", name, d, ok)
		}
	}
	if _, ok := x.Find(Identifier("kg::gemm_wmma<64, 64, 32>")); ok {
		t.Error("a kernel not in the sources is not found")
	}
}

func TestScanRefusesHugeFiles(t *testing.T) {
	_, err := Scan(strings.NewReader(strings.Repeat("x", MaxFileSize+1)), "big.cu")
	if err == nil || !strings.Contains(err.Error(), "big.cu") {
		t.Errorf("err %v", err)
	}
}

func FuzzScan(f *testing.F) {
	for _, file := range []string{"flash_fwd.cu", "softmax.cu", "kg_bench.h"} {
		if b, err := os.ReadFile(filepath.Join("..", "..", "kernels", file)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("__global__ void __launch_bounds__((((( k("))
	f.Add([]byte("__global__ [[ x"))
	f.Fuzz(func(t *testing.T, src []byte) {
		defs, err := Scan(strings.NewReader(string(src)), "f.cu")
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Count(string(src), "\n") + 1
		for _, d := range defs {
			if d.Line < 1 || d.Line > lines || !isIdent(d.Name) {
				t.Fatalf("def %+v outside the %d-line input", d, lines)
			}
		}
	})
}
