package sass
import ("bytes";"os";"testing";"time")
func FuzzTmpSlow(f *testing.F) {
	f.Add(lines(f, "cuda13-h200/cuobjdump_sass_gemm_multi.txt", 0, 40))
	f.Add(lines(f, "cuda13-h200/nvdisasm_softmax_sm90a.txt", 1160, 1200))
	f.Add(readFile(f, testdata("seed-l4-cuda12.8/wmma_proof_0953f67.txt")))
	f.Fuzz(func(t *testing.T, in []byte) {
		tm := time.AfterFunc(3*time.Second, func() { os.WriteFile("/tmp/slow.bin", in, 0o644); panic("slow") })
		Parse(bytes.NewReader(in), ParseOptions{})
		tm.Stop()
	})
}
