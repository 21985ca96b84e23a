package sanitizer

import "strings"

// A library is a CUDA library that allocates device memory inside the handles and plans
// it creates: what it leaks was never the program's cudaMalloc, and only destroying the
// handle frees it.
type library struct {
	// Name as the message says it; prefix of its functions; its module's file name.
	Name, prefix, module string
	// Free is what frees a handle's memory.
	Free string
}

// libraries: cuBLAS (and cuBLASLt, whose handles cublasLtDestroy frees), cuDNN, cuFFT's
// plans, cuSPARSE, cuSOLVER and cuRAND's generators.
var libraries = []library{
	{"cuBLASLt", "cublasLt", "libcublasLt", "cublasLtDestroy"},
	{"cuBLAS", "cublas", "libcublas", "cublasDestroy"},
	{"cuDNN", "cudnn", "libcudnn", "cudnnDestroy"},
	{"cuFFT", "cufft", "libcufft", "cufftDestroy"},
	{"cuSPARSE", "cusparse", "libcusparse", "cusparseDestroy"},
	{"cuSOLVER", "cusolver", "libcusolver", "cusolverDnDestroy"},
	{"cuRAND", "curand", "libcurand", "curandDestroyGenerator"},
}

// libraryOf returns the library a host frame belongs to, by its function ("cublasCreate_v2")
// or its module ("/usr/local/cuda/lib64/libcublas.so.12"), or nil.
func libraryOf(fn, module string) *library {
	base := module[strings.LastIndexByte(module, '/')+1:]
	for i, l := range libraries {
		if fn != "" && strings.HasPrefix(fn, l.prefix) || strings.HasPrefix(base, l.module+".") || strings.HasPrefix(base, l.module+"_") {
			return &libraries[i]
		}
	}
	return nil
}

// libraryNamed returns the library of that Name, or nil.
func libraryNamed(name string) *library {
	for i, l := range libraries {
		if l.Name == name {
			return &libraries[i]
		}
	}
	return nil
}

// allocation assembles a leak's allocation site from its host frames, innermost first:
// the first frame of the program's own, past the CUDA runtime's and a library's, and the
// library whose frames came before it.
type allocation struct {
	site    string
	lib     *library
	libCall string // the library's outermost named function ("cublasCreate_v2")
	// fromLast: site was set by the last frame, whose module may still show it is a
	// library's (the module is printed on the next line).
	fromLast bool
}

// frame adds a frame: fn (its symbol, "" for none), pc, and its module when known.
func (a *allocation) frame(fn, pc, module string) {
	a.fromLast = false
	if l := libraryOf(fn, module); l != nil {
		a.library(l, fn)
		return
	}
	if fn == "" || isRuntimeFrame(fn) || a.site != "" {
		return
	}
	a.site = frameName(fn) + "+" + pc
	a.fromLast = true
}

// module is the module of the last frame, printed on a line of its own after it.
func (a *allocation) module(module string) {
	if l := libraryOf("", module); l != nil {
		if a.fromLast {
			a.site = ""
		}
		a.library(l, "")
	}
	a.fromLast = false
}

func (a *allocation) library(l *library, fn string) {
	if a.site != "" && !a.fromLast {
		return // past the program's frame: a library it was called from
	}
	if a.lib == nil {
		a.lib = l
	}
	if fn != "" && a.lib == l {
		a.libCall = frameName(fn)
	}
}

// access writes a leak's or unused allocation's place: "at main+0x8ce0", or "by cuBLAS
// (cublasCreate_v2) at ggml_init_cublas+0x199ee2".
func (a allocation) access() string {
	s := ""
	if a.lib != nil {
		s = "by " + a.lib.Name
		if a.libCall != "" {
			s += " (" + a.libCall + ")"
		}
	}
	if a.site != "" {
		if s != "" {
			s += " "
		}
		s += "at " + a.site
	}
	return s
}
