package sanitizer

import (
	"fmt"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/numtext"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// stickyErrors are the CUDA errors that leave a process's context unusable: after one,
// every later CUDA call of the process fails with it, and the buffers it can no longer
// free leak (the runtime's names and the driver API's).
var stickyErrors = []string{
	"cudaErrorLaunchFailure", "cudaErrorIllegalAddress", "cudaErrorIllegalInstruction",
	"cudaErrorMisalignedAddress", "cudaErrorInvalidAddressSpace", "cudaErrorInvalidPc",
	"cudaErrorHardwareStackError", "cudaErrorAssert", "cudaErrorLaunchTimeout",
	"CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	"CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_INVALID_PC",
	"CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_ASSERT", "CUDA_ERROR_LAUNCH_TIMEOUT",
}

// isDeviceFault reports a kernel's own error, the kind that ends its launch and breaks the
// context.
func isDeviceFault(kind string) bool {
	switch kind {
	case KindOutOfBounds, KindMisaligned, KindInvalidAddress, KindHardwareException, KindDeviceAssert, KindDeviceHeap:
		return true
	}
	return false
}

func isSticky(rec Record) bool {
	if rec.Kind != KindAPIError {
		return false
	}
	_, e, _ := strings.Cut(rec.Access, " returned ")
	for _, s := range stickyErrors {
		if e == s || strings.HasPrefix(rec.Access, s) {
			return true
		}
	}
	return false
}

// brokenContext finds, in records in the order the run first printed them, the first
// kernel fault (fault, or -1) and which records only follow from it (after): the API
// errors and leaks from the first API call that failed with a sticky error after the
// fault onwards. Leaks are printed at the process's end, after every API error.
func brokenContext(recs []Record) (fault int, after []bool) {
	fault = -1
	after = make([]bool, len(recs))
	broken := false
	for i, rec := range recs {
		switch {
		case fault < 0 && isDeviceFault(rec.Kind):
			fault = i
		case fault >= 0 && !broken && isSticky(rec):
			broken = true
		}
		if broken && (rec.Kind == KindAPIError || rec.Kind == KindLeak) {
			after[i] = true
		}
	}
	return fault, after
}

// folded counts the records brokenContext folds, and the worst severity they had.
type folded struct {
	api, leaks int
	sev        result.Severity
}

func (f *folded) add(rec Record, sev result.Severity) {
	if rec.Kind == KindLeak {
		f.leaks += rec.Count
	} else {
		f.api += rec.Count
	}
	if f.sev == "" || sev == result.Error {
		f.sev = sev
	}
}

// message is the one line under the fault: "and 6 API errors and 4 leaks after it: ...".
func (f folded) message(tool string) string {
	var parts []string
	if f.api > 0 {
		parts = append(parts, numtext.Count(f.api, "API error"))
	}
	if f.leaks > 0 {
		parts = append(parts, numtext.Count(f.leaks, "leak"))
	}
	return fmt.Sprintf("%s: and %s after it: the CUDA context was broken (after a kernel's fault every later CUDA call of the process fails, and what it could not free leaks); fix the fault first, each is in the table",
		tool, strings.Join(parts, " and "))
}
