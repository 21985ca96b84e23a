// Package gitdiff asks git which lines a change adds or modifies, and for the files as they
// are after it, so a gate can judge only what a pull request brings while still reading
// whole files for context. Every git it runs gets the child environment (package childenv)
// and the caller's context.
//
// A change is read in these steps:
//
//  1. ParseSpec reads what --diff names: "BASE..HEAD" (the two commits), "BASE...HEAD"
//     (from their merge base, as a pull request shows it) or a lone "BASE"; BaseCommit is
//     the commit the change is measured from.
//  2. Changes lists the files the change adds or modifies with their added lines (a
//     Change of Hunks); ChangesWithContext adds the unchanged lines a reader of the diff
//     sees around them (the action's filter-mode diff_context). ParsePatch reads one
//     file's hunks as GitHub's API gives them, for stage B, which has no checkout of the
//     change. A patch whose hunks do not hold what their headers count is an error.
//  3. Change.Touches tells a caller whether a finding's lines were added; Files lists
//     every path the change touches, a pure rename included, and Moved those given a new
//     path, type or mode, which a judge reads whole although no line was added.
//  4. Show and Exists read a file as it is at a revision (the config at the change's base,
//     for the guard), and TopLevel finds the repository's top directory.
package gitdiff
