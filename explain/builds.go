package explain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/internal/gpuinfo"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// Schema names the JSON of `kernel-gate explain`. Within v1 fields are only added.
const Schema = "kernel-gate/explain/v1"

// Sources is what one side (base or head) of `kernel-gate explain` was read from: its ptxas
// records (a build log, or a result's ptxas data.kernels) and its SASS functions (a dump,
// or a result's sass data.functions).
type Sources struct {
	Records []ptxas.Kernel
	SASS    []sass.FunctionData
	// Device is the GPU of the result it was read from (nil: none).
	Device *result.Device
	// NoMix counts the functions left out for having no instruction mix: a result's
	// written before the sass gate kept one, a grep-filtered dump's (sass.Function.Mix).
	NoMix int
}

// Options say which launch and GPU Explain computes occupancy for.
type Options struct {
	// GPU is the compute capability ("9.0") or arch ("sm_90"); empty: head's result's
	// device, else each kernel's own arch.
	GPU string
	// BlockSize is the launch's threads per block (0: unknown, occupancy left out).
	BlockSize, DynamicSmem int
}

// Kernel is one kernel × arch explained.
type Kernel struct {
	Kernel string `json:"kernel"`
	Name   string `json:"name"`
	Arch   string `json:"arch"`
	// Base is base's mangled name of the kernel where the change renamed it (Pair);
	// absent where base names it alike.
	Base    string             `json:"base,omitempty"`
	Explain result.Explanation `json:"explain"`
}

// Explained is what `kernel-gate explain` writes.
type Explained struct {
	Schema string `json:"schema"`
	// Unchanged counts the kernel × arch pairs of both sides whose records and SASS agree.
	Unchanged int      `json:"unchanged"`
	Kernels   []Kernel `json:"kernels"`
	// Notes say what the inputs could not show (no SASS on a side, kernels of one side).
	Notes []string `json:"notes"`
}

// Explain explains every kernel × arch of head whose ptxas record or SASS differs from
// base's, in head's order; a kernel is base's by Pair: of the same kernelname identity, or
// the one base alone has where the change renamed it, and its headline then says so.
func Explain(base, head Sources, o Options) Explained {
	out := Explained{Schema: Schema, Kernels: []Kernel{}, Notes: []string{}}
	gpu := o.GPU
	if gpu == "" && head.Device != nil {
		gpu = head.Device.Arch
	}
	noBlock := "pass --block-size N, the threads per block it launches with"
	baseSASS, headSASS := functionsByID(base.SASS), functionsByID(head.SASS)
	heads := entryFunctions(head)
	pairs := Pair(entryFunctions(base), heads)
	for _, h := range heads {
		id := h.Name.Identity()
		bn, renamed, ok := pairs.Base(h.Name, h.Arch)
		if !ok {
			out.Notes = append(out.Notes, fmt.Sprintf("%s (%s) is only in head", h.Name.Short, h.Arch))
			continue
		}
		b := Side{Record: findRecord(base.Records, bn.Identity(), h.Arch), SASS: baseSASS[identityArch{bn.Identity(), h.Arch}]}
		hs := Side{Record: findRecord(head.Records, id, h.Arch), SASS: headSASS[identityArch{id, h.Arch}]}
		if !changed(b, hs) {
			out.Unchanged++
			continue
		}
		in := Input{Base: b, Head: hs, GPU: h.Arch, BlockSize: o.BlockSize, DynamicSmem: o.DynamicSmem, NoBlockSize: noBlock}
		if o.BlockSize > 0 {
			in.BlockSizeFrom = "option"
		}
		if gpu != "" && gpuinfo.RunnableOn([]string{h.Arch}, archOf(gpu)) {
			in.GPU = gpu
		}
		k := Kernel{Kernel: h.Name.Short, Name: h.Name.Mangled, Arch: h.Arch}
		if renamed {
			in.Headline, k.Base = RenamedHeadline(bn), bn.Mangled
		}
		k.Explain = Build(in)
		out.Kernels = append(out.Kernels, k)
	}
	switch n := base.NoMix + head.NoMix; {
	case n > 0:
		out.Notes = append(out.Notes, fmt.Sprintf("%d function(s) have no instruction mix, and theirs is not compared: a result written before the sass gate kept one (data.functions[].mix) has none, a grep-filtered dump shows only part of each function (pass --base-sass and --head-sass, whole cuobjdump --dump-sass dumps of each build)", n))
	case len(head.SASS) == 0 || len(base.SASS) == 0:
		out.Notes = append(out.Notes, "no SASS on a side: the instruction mix is not compared (pass --base-sass and --head-sass, cuobjdump --dump-sass of each build)")
	}
	return out
}

// archOf is "sm_90" for a compute capability "9.0", an arch as it is.
func archOf(gpu string) string {
	if len(gpu) > 0 && gpu[0] >= '0' && gpu[0] <= '9' {
		return gpuinfo.Info{ComputeCap: gpu}.Arch()
	}
	return gpu
}

// identityArch is a kernel as both sides name it (kernelname's identity) on one arch.
type identityArch struct{ id, arch string }

// entryFunctions are a side's entry kernels × archs: its records', then its SASS's that no
// record names, each once.
func entryFunctions(s Sources) []Function {
	var out []Function
	seen := map[[2]string]bool{}
	add := func(name, arch string, entry *bool) {
		k := [2]string{name, arch}
		if entry != nil && !*entry || seen[k] {
			return
		}
		seen[k] = true
		out = append(out, Function{Name: kernelname.Parse(name), Arch: arch})
	}
	for _, k := range s.Records {
		add(k.Name, k.Arch, k.Entry)
	}
	for _, fn := range s.SASS {
		add(fn.Name, fn.Arch, fn.Entry)
	}
	return out
}

func findRecord(rs []ptxas.Kernel, id, arch string) *ptxas.Kernel {
	for i := range rs {
		if rs[i].Arch == arch && kernelname.Parse(rs[i].Name).Identity() == id {
			return &rs[i]
		}
	}
	return nil
}

// functionsByID indexes functions by identity and arch, the first of each: a result's
// functions are names to parse (demangle) once, not once per kernel looked up.
func functionsByID(fs []sass.FunctionData) map[identityArch]*sass.FunctionData {
	m := make(map[identityArch]*sass.FunctionData, len(fs))
	for i := range fs {
		k := identityArch{kernelname.Parse(fs[i].Name).Identity(), fs[i].Arch}
		if _, ok := m[k]; !ok {
			m[k] = &fs[i]
		}
	}
	return m
}

// changed reports whether anything Build reads differs between the sides.
func changed(b, h Side) bool {
	if b.SASS != nil && h.SASS != nil && b.SASS.Digest != h.SASS.Digest {
		return true
	}
	return b.Record != nil && h.Record != nil && len(resourceChanges(b.Record, h.Record)) > 0
}

// ReadLog adds the ptxas records of a build log (nvcc -Xptxas -v, gzip or plain) to b.
func (b *Sources) ReadLog(ctx context.Context, path string) error {
	var l ptxas.Log
	if err := input.Read(ctx, []string{path}, nil, input.Log, func(r io.Reader, name string) error {
		return l.Parse(r, name, nil)
	}); err != nil {
		return err
	}
	b.Records = append(b.Records, l.Kernels...)
	return nil
}

// add adds a function that has an instruction mix to b.SASS, and counts one that has none
// in NoMix: a mix that is not there is not compared, never taken for zero.
func (b *Sources) add(fn sass.FunctionData) {
	if fn.Mix == nil {
		b.NoMix++
		return
	}
	b.SASS = append(b.SASS, fn)
}

// ReadSASS adds the functions of a SASS dump (cuobjdump --dump-sass or nvdisasm) to b, as
// the sass gate's data records them (sass.Function.Data).
func (b *Sources) ReadSASS(ctx context.Context, path string) error {
	return input.Read(ctx, []string{path}, nil, input.Log, func(r io.Reader, name string) error {
		d, err := sass.Parse(r, sass.ParseOptions{})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, fn := range d.Functions {
			b.add(fn.Data())
		}
		return nil
	})
}

// ReadResult adds a saved result's ptxas records (the ptxas gate's data.kernels), its SASS
// functions with their instruction mix (the sass gate's data.functions, checked by
// sass.ReadData: the result may be a fork's) and its device to b. A function without a
// mix (a result written before the gate kept one) is left out and counted in NoMix: its
// mix is not compared, never taken for zero.
func (b *Sources) ReadResult(ctx context.Context, path string) error {
	raw, err := input.ReadFile(ctx, path, input.JSON)
	if err != nil {
		return err
	}
	res, err := result.Read(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	b.Device = res.Device
	for _, g := range res.Gates {
		if len(g.Data) == 0 {
			continue
		}
		switch g.Name {
		case ptxas.Name:
			var d ptxas.Data
			if err := json.Unmarshal(g.Data, &d); err != nil {
				return fmt.Errorf("%s: the ptxas gate's data: %w", path, err)
			}
			b.Records = append(b.Records, d.Kernels...)
		case sass.Name:
			d, err := sass.ReadData(g.Data)
			if err != nil {
				return fmt.Errorf("%s: the sass gate's data: %w", path, err)
			}
			for _, fn := range d.Functions {
				b.add(fn)
			}
		}
	}
	if len(b.Records) == 0 && len(b.SASS) == 0 {
		return fmt.Errorf("%s: the result has neither ptxas records (its ptxas gate's data.kernels) nor an instruction mix (its sass gate's data.functions[].mix) to explain", path)
	}
	return nil
}
