package sass

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/strictjson"
)

// Class is a kind of SASS instruction, as a CUDA engineer reads a profile: global, shared
// and local loads and stores, tensor-core MMA, FP32/FP16/FP64 math, conversions,
// barriers, branches. Its value is the class's key in the gate's data
// (data.functions[].mix), stable within kernel-gate/result/v1; Label is its name in a
// sentence.
type Class string

const (
	GlobalLoad  Class = "global_load"
	GlobalStore Class = "global_store"
	SharedLoad  Class = "shared_load"
	SharedStore Class = "shared_store"
	LocalLoad   Class = "local_load"
	LocalStore  Class = "local_store"
	TensorCore  Class = "mma"
	FP32        Class = "fp32"
	FP16        Class = "fp16"
	FP64        Class = "fp64"
	Conversion  Class = "conversion"
	Barrier     Class = "barrier"
	Branch      Class = "branch"
	Integer     Class = "integer"
	Special     Class = "special"
	OtherClass  Class = "other"
)

// Label is the class's name in a sentence ("local loads"); "" for a class that is not one.
func (c Class) Label() string {
	switch c {
	case GlobalLoad:
		return "global loads"
	case GlobalStore:
		return "global stores"
	case SharedLoad:
		return "shared loads"
	case SharedStore:
		return "shared stores"
	case LocalLoad:
		return "local loads"
	case LocalStore:
		return "local stores"
	case TensorCore:
		return "tensor-core MMA"
	case FP32:
		return "FP32 math"
	case FP16:
		return "FP16 math"
	case FP64:
		return "FP64 math"
	case Conversion:
		return "conversions"
	case Barrier:
		return "barriers"
	case Branch:
		return "branches"
	case Integer:
		return "integer math"
	case Special:
		return "special functions"
	case OtherClass:
		return "other"
	}
	return ""
}

// ClassOf returns the class of an opcode as Function.Opcodes counts it
// ("LDG.E.128.CONSTANT"), by its base (the text before the first '.'). Opcodes not listed
// are OtherClass (moves, predicates, NOPs, uniform-datapath bookkeeping).
func ClassOf(opcode string) Class {
	base, _, _ := strings.Cut(opcode, ".")
	switch base {
	case "LDG", "LD", "LDGSTS", "LDGDEPBAR", "UBLKCP", "UTMALDG":
		return GlobalLoad
	case "STG", "ST", "RED", "ATOMG", "ATOM", "UTMASTG":
		return GlobalStore
	case "LDS", "LDSM", "ATOMS":
		return SharedLoad
	case "STS", "STSM":
		return SharedStore
	case "LDL":
		return LocalLoad
	case "STL":
		return LocalStore
	case "HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "UTCHMMA", "UTCQMMA":
		return TensorCore
	case "FADD", "FMUL", "FFMA", "FMNMX", "FSETP", "FSET", "FSEL", "FCHK", "FSWZADD", "FADD32I", "FMUL32I", "FFMA32I":
		return FP32
	case "HADD2", "HMUL2", "HFMA2", "HMNMX2", "HSETP2", "HSET2", "HADD2_32I", "HMUL2_32I", "HFMA2_32I":
		return FP16
	case "DADD", "DMUL", "DFMA", "DSETP", "DMNMX":
		return FP64
	case "F2F", "F2I", "I2F", "F2FP", "I2I", "I2FP", "F2IP", "FRND":
		return Conversion
	case "BAR", "BARRIER", "SYNCS", "MEMBAR", "DEPBAR", "WARPSYNC", "ARRIVES":
		return Barrier
	case "BRA", "BRX", "JMP", "JMX", "CALL", "RET", "EXIT", "BSSY", "BSYNC", "BREAK", "BPT":
		return Branch
	case "IMAD", "IADD3", "IADD", "LOP3", "SHF", "ISETP", "LEA", "IMNMX", "VIADD", "VIMNMX", "IABS", "POPC", "FLO", "BREV", "IMUL", "SHL", "SHR", "PRMT", "SEL", "IDP", "VIADDMNMX":
		return Integer
	case "MUFU":
		return Special
	}
	return OtherClass
}

// Mix counts a function's instructions per class; a class it has none of is absent.
type Mix map[Class]int

// Mix folds f's opcode counts into classes: the instruction mix the gate's data records
// and package explain compares. It is nil for a function the dump shows only part of
// (Filtered): counts of the lines a filter kept are not the function's mix.
func (f Function) Mix() Mix {
	if f.Filtered {
		return nil
	}
	m := Mix{}
	for op, n := range f.Opcodes {
		m[ClassOf(op)] += n
	}
	return m
}

// MaxCount bounds an instruction count read back from a file: a cubin of 2^30
// instructions would be 16 GiB of code, far beyond any real one.
const MaxCount = 1 << 30

// ErrBadData is wrapped by ReadData's error for gate data that is not what Evaluate
// writes.
var ErrBadData = errors.New("not the sass gate's data")

// CheckMix checks a function's instruction mix as read from a file nobody vouches for (a
// fork's result, a baseline entry): every class one that ClassOf gives, every count and
// the instructions 0 to MaxCount, the counts summing to its instructions, and clock reads
// 0 to its instructions and only beside a mix. A nil mix (a result written before the
// gate recorded it, a filtered dump) passes, with no clock reads.
func CheckMix(instructions int, m Mix, clockReads int) error {
	if m == nil {
		if clockReads != 0 {
			return fmt.Errorf("clock_reads %d without a mix", clockReads)
		}
		return nil
	}
	if instructions < 0 || instructions > MaxCount {
		return fmt.Errorf("instructions %d: want 0 to %d", instructions, MaxCount)
	}
	sum := 0
	for c, n := range m {
		if c.Label() == "" {
			return fmt.Errorf("mix: %q is not an instruction class", string(c))
		}
		if n < 0 || n > MaxCount {
			return fmt.Errorf("mix: %s %d: want 0 to %d", c, n, MaxCount)
		}
		sum += n // at most 16 classes of 2^30: no overflow
	}
	if sum != instructions {
		return fmt.Errorf("mix: the classes sum to %d instructions, the function has %d", sum, instructions)
	}
	if clockReads < 0 || clockReads > instructions {
		return fmt.Errorf("clock_reads %d: want 0 to its %d instructions", clockReads, instructions)
	}
	return nil
}

// ReadData reads the gate's data (result.Gate.Data) from a result nobody vouches for: no
// key given twice (strictjson), every function's instruction mix checked (CheckMix). Data
// of a result written before the gate recorded the mix reads with Mix nil.
// Why: docs/threat-model.md, threat-model T18.
func ReadData(raw []byte) (Data, error) {
	var d Data
	if len(bytes.TrimSpace(raw)) == 0 {
		return d, nil
	}
	if err := strictjson.Unmarshal(raw, &d, strictjson.Options{Exact: []string{"matches", "mix"}}); err != nil {
		return Data{}, fmt.Errorf("%w: %w", ErrBadData, err)
	}
	for i, f := range d.Functions {
		if err := CheckMix(f.Instructions, f.Mix, f.ClockReads); err != nil {
			return Data{}, fmt.Errorf("%w: functions[%d] (%.200q, %.32q): %w", ErrBadData, i, f.Name, f.Arch, err)
		}
	}
	return d, nil
}
