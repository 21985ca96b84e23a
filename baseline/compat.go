package baseline

// Compatibility: whether an entry measured with other software may be compared.

import (
	"context"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Constraints say which stored entries a run may be compared with, by the software they
// were measured with: another CUDA toolkit can change code generation and another driver
// can change timings, yet both change under a runner more often than its GPU does, so
// they are a policy (the config's baseline.compatible_cuda and compatible_driver) rather
// than part of the Key. The syntax is Masterminds semver's ("~13.0", ">=570, <590").
type Constraints struct {
	// CUDA constrains the toolkit version (Fingerprint.CUDA); empty allows any.
	CUDA string
	// Driver constrains the driver version (Fingerprint.Driver, "580.159.04"); empty
	// allows any.
	Driver string
}

// Names of the constraints in messages, as the config spells them.
const (
	nameCUDA   = "baseline.compatible_cuda"
	nameDriver = "baseline.compatible_driver"
)

// Check reports a constraint that is not one, so that a config error shows when the
// config is read rather than as every entry being incomparable.
func (c Constraints) Check() error {
	for _, x := range c.each(Fingerprint{}) {
		if x.constraint == "" {
			continue
		}
		if _, err := semver.NewConstraint(x.constraint); err != nil {
			return fmt.Errorf("%s %q is not a version constraint: %v", x.name, x.constraint, err)
		}
	}
	return nil
}

type constrained struct {
	name, what, constraint, version string
}

func (c Constraints) each(f Fingerprint) []constrained {
	return []constrained{
		{nameCUDA, "CUDA toolkit", strings.TrimSpace(c.CUDA), f.CUDA},
		{nameDriver, "driver", strings.TrimSpace(c.Driver), f.Driver},
	}
}

// Comparable says whether entry e may be compared with under c, and why: the versions
// it was measured with against each constraint. An entry that cannot be shown to satisfy
// a constraint (no version recorded, a version or constraint that does not parse) is not
// comparable: a baseline is never used silently when it might not apply.
func Comparable(e Entry, c Constraints) (ok bool, why string) {
	var good []string
	for _, x := range c.each(e.Fingerprint) {
		if x.constraint == "" {
			continue
		}
		con, err := semver.NewConstraint(x.constraint)
		if err != nil {
			return false, fmt.Sprintf("%s %q is not a version constraint: %v", x.name, x.constraint, err)
		}
		if x.version == "" {
			return false, fmt.Sprintf("%s records no %s version, so %s %q cannot be checked", e.Describe(), x.what, x.name, x.constraint)
		}
		v, err := semver.NewVersion(x.version)
		if err != nil {
			return false, fmt.Sprintf("%s records %s version %q, which is not a version %s %q can judge", e.Describe(), x.what, x.version, x.name, x.constraint)
		}
		if ok, errs := con.Validate(v); !ok {
			reasons := make([]string, len(errs))
			for i, err := range errs {
				reasons[i] = err.Error()
			}
			return false, fmt.Sprintf("%s was measured with %s %s, outside %s %q (%s)", e.Describe(), x.what, x.version, x.name, x.constraint, strings.Join(reasons, "; "))
		}
		good = append(good, fmt.Sprintf("%s %s satisfies %s %q", x.what, x.version, x.name, x.constraint))
	}
	if len(good) == 0 {
		return true, fmt.Sprintf("no %s or %s: every entry of %s is comparable", nameCUDA, nameDriver, e.Key())
	}
	return true, strings.Join(good, "; ")
}

// Choice is what NewestComparable found for a key.
type Choice struct {
	Key Key
	// Entry is the newest comparable entry; nil when there is none.
	Entry *Entry
	// Why says why Entry is comparable (Comparable's reason).
	Why string
	// Passed are the entries newer than Entry (all of them when Entry is nil) that are not
	// comparable, newest first, each with why.
	Passed []Passed
	// Entries is how many entries the key has.
	Entries int
}

// Passed is an entry NewestComparable did not choose, and why.
type Passed struct {
	Entry Entry
	Why   string
}

// NewestComparable reads key k's history and chooses its newest entry that c allows
// comparing with. Newer entries it passes over are kept in the choice with their reasons,
// so that a caller reports them instead of falling back silently.
func NewestComparable(ctx context.Context, r Reader, k Key, c Constraints) (Choice, error) {
	ch := Choice{Key: k}
	es, err := r.History(ctx, k, 0)
	if err != nil {
		return ch, err
	}
	ch.Entries = len(es)
	for _, e := range es {
		ok, why := Comparable(e, c)
		if ok {
			ch.Entry, ch.Why = &e, why
			return ch, nil
		}
		ch.Passed = append(ch.Passed, Passed{Entry: e, Why: why})
	}
	return ch, nil
}
