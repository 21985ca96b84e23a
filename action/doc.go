// Package action is kernel-gate's GitHub Actions entry (`kernel-gate action`): it reads
// the action's inputs and the event, decides what to do (gate head against its base, report
// a result another job made, update the baseline), runs the pipeline, and reports through
// every channel GitHub offers: a check run with annotations on the kernels' source lines,
// the job summary, step outputs, workflow-command annotations and an optional pull-request
// comment. A reporting failure never changes the verdict or the exit code.
package action
