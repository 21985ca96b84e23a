// Package result is the kernel-gate result model (schema "kernel-gate/result/v1"): plain
// structs that every gate fills and every reporter reads. Other tools and later gates read
// these JSON names, so they do not change within v1; docs/result.md documents them.
//
// A result is made and read in these steps:
//
//  1. A gate fills a Gate: its Findings (each with a Severity: error, warning or notice,
//     and where known the kernel, arch, file, line, metric, value, limit and baseline), a
//     Table that reporters render without knowing the gate, and its own record through
//     SetData. Decide sets its Verdict from the findings: any error fails it, and a gate
//     that judged nothing skips, saying why, rather than passes.
//  2. New joins the gates into a Result with the overall verdict (Overall): fail when any
//     gate fails, skip when every gate skipped, pass otherwise. The pipeline adds the
//     Device, and a shard's result its Shard.
//  3. Write encodes it; Read decodes a saved one and checks it, as input nobody vouches
//     for: the schema, one JSON value with no key twice, every verdict and severity known,
//     no gate that passes with an error, an overall verdict that is its gates', and for a
//     merged result a shards gate that holds every shard.
//  4. Merge joins the results of a run's shards (kernel-gate merge) into one, failing its
//     "shards" gate (ShardsGate) for a shard missing, given twice, unreadable or of
//     another run.
//
// Under turns a path a tool printed into the repository's own name for the file, so that
// findings are placed on the change's lines however the checkout was spelled.
package result
