package explain

import (
	"cmp"
	"slices"
	"strings"
)

// Class is a kind of SASS instruction, named as a CUDA engineer reads a profile.
type Class string

const (
	GlobalLoad  Class = "global loads"
	GlobalStore Class = "global stores"
	SharedLoad  Class = "shared loads"
	SharedStore Class = "shared stores"
	LocalLoad   Class = "local loads"
	LocalStore  Class = "local stores"
	TensorCore  Class = "tensor-core MMA"
	FP32        Class = "FP32 math"
	FP16        Class = "FP16 math"
	FP64        Class = "FP64 math"
	Conversion  Class = "conversions"
	Barrier     Class = "barriers"
	Branch      Class = "branches"
	Integer     Class = "integer math"
	Special     Class = "special functions"
	OtherClass  Class = "other"
)

// classes maps an opcode's base (its text before the first '.') to its class. Opcodes
// not listed are OtherClass (moves, predicates, NOPs, uniform-datapath bookkeeping).
var classes = map[string]Class{
	"LDG": GlobalLoad, "LD": GlobalLoad, "LDGSTS": GlobalLoad, "LDGDEPBAR": GlobalLoad, "UBLKCP": GlobalLoad, "UTMALDG": GlobalLoad,
	"STG": GlobalStore, "ST": GlobalStore, "RED": GlobalStore, "ATOMG": GlobalStore, "ATOM": GlobalStore, "UTMASTG": GlobalStore,
	"LDS": SharedLoad, "LDSM": SharedLoad, "ATOMS": SharedLoad,
	"STS": SharedStore, "STSM": SharedStore,
	"LDL": LocalLoad, "STL": LocalStore,
	"HMMA": TensorCore, "IMMA": TensorCore, "DMMA": TensorCore, "BMMA": TensorCore, "HGMMA": TensorCore, "IGMMA": TensorCore, "QGMMA": TensorCore, "BGMMA": TensorCore, "UTCHMMA": TensorCore, "UTCQMMA": TensorCore,
	"FADD": FP32, "FMUL": FP32, "FFMA": FP32, "FMNMX": FP32, "FSETP": FP32, "FSET": FP32, "FSEL": FP32, "FCHK": FP32, "FSWZADD": FP32, "FADD32I": FP32, "FMUL32I": FP32, "FFMA32I": FP32,
	"HADD2": FP16, "HMUL2": FP16, "HFMA2": FP16, "HMNMX2": FP16, "HSETP2": FP16, "HSET2": FP16, "HADD2_32I": FP16, "HMUL2_32I": FP16, "HFMA2_32I": FP16,
	"DADD": FP64, "DMUL": FP64, "DFMA": FP64, "DSETP": FP64, "DMNMX": FP64,
	"F2F": Conversion, "F2I": Conversion, "I2F": Conversion, "F2FP": Conversion, "I2I": Conversion, "I2FP": Conversion, "F2IP": Conversion, "FRND": Conversion,
	"BAR": Barrier, "BARRIER": Barrier, "SYNCS": Barrier, "MEMBAR": Barrier, "DEPBAR": Barrier, "WARPSYNC": Barrier, "ARRIVES": Barrier,
	"BRA": Branch, "BRX": Branch, "JMP": Branch, "JMX": Branch, "CALL": Branch, "RET": Branch, "EXIT": Branch, "BSSY": Branch, "BSYNC": Branch, "BREAK": Branch, "BPT": Branch,
	"IMAD": Integer, "IADD3": Integer, "IADD": Integer, "LOP3": Integer, "SHF": Integer, "ISETP": Integer, "LEA": Integer, "IMNMX": Integer, "VIADD": Integer, "VIMNMX": Integer, "IABS": Integer, "POPC": Integer, "FLO": Integer, "BREV": Integer, "IMUL": Integer, "SHL": Integer, "SHR": Integer, "PRMT": Integer, "SEL": Integer, "IDP": Integer, "VIADDMNMX": Integer,
	"MUFU": Special,
}

// ClassOf returns the class of an opcode as sass.Function counts it ("LDG.E.128.CONSTANT").
func ClassOf(opcode string) Class {
	base, _, _ := strings.Cut(opcode, ".")
	if c, ok := classes[base]; ok {
		return c
	}
	return OtherClass
}

// Mix counts instructions per class.
type Mix map[Class]int

// MixOf folds a function's opcode counts into classes.
func MixOf(opcodes map[string]int) Mix {
	m := Mix{}
	for op, n := range opcodes {
		m[ClassOf(op)] += n
	}
	return m
}

// MixChange is one class's count on both sides.
type MixChange struct {
	Class      Class
	Base, Head int
}

// Delta is Head - Base.
func (c MixChange) Delta() int { return c.Head - c.Base }

// Ratio is the relative change (0.5 for +50%); +Inf from zero is reported as 1e9.
func (c MixChange) Ratio() float64 {
	if c.Base == 0 {
		if c.Head == 0 {
			return 0
		}
		return 1e9
	}
	return float64(c.Head-c.Base) / float64(c.Base)
}

// CompareMix lists the classes whose count changed, the biggest relative change first
// (ties: the larger absolute change); OtherClass last, since it says nothing of why.
func CompareMix(base, head Mix) []MixChange {
	var out []MixChange
	seen := map[Class]bool{}
	for _, m := range []Mix{base, head} {
		for c := range m {
			if seen[c] {
				continue
			}
			seen[c] = true
			if base[c] != head[c] {
				out = append(out, MixChange{Class: c, Base: base[c], Head: head[c]})
			}
		}
	}
	abs := func(x float64) float64 { return max(x, -x) }
	slices.SortFunc(out, func(a, b MixChange) int {
		if (a.Class == OtherClass) != (b.Class == OtherClass) {
			if a.Class == OtherClass {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(abs(b.Ratio()), abs(a.Ratio())), cmp.Compare(abs(float64(b.Delta())), abs(float64(a.Delta()))), cmp.Compare(a.Class, b.Class))
	})
	return out
}
