// Package kernelname turns the kernel names that NVIDIA tools print (mangled C++ or plain
// extern "C") into readable forms, and matches config globs against them.
//
// A kernel's name goes through these steps:
//
//  1. Parse demangles what ptxas, cuobjdump, the sanitizer or ncu printed
//     (_ZN2kg9flash_fwdILi64ELi64ELb0EEEvPK6__halfS3_S3_PS1_if) into a Name with four
//     forms: Mangled, Demangled (the full signature), Short (kg::flash_fwd<64, 64, false>)
//     and Base (flash_fwd<64, 64, false>). A name that is not mangled C++ is kept as it is.
//  2. Name.Matches tells whether a config Glob matches any of those forms; Glob.Match
//     matches one string as a whole, with '*' for any run of characters ("::" and "<"
//     included), '?' for one, and every other character literal (operator[] works).
//     Glob.Valid refuses an empty glob when the config is loaded.
//  3. Name.Identity names the same function in two builds of the same sources (base's
//     worktree and head's checkout): the demangled signature without the hash nvcc puts in
//     an anonymous namespace, which depends on the file's path.
package kernelname
