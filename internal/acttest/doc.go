// Package acttest holds the end-to-end tests of the GitHub Action (action.yml at the
// repository's root): its tests copy the repository into a temporary git repository,
// write a workflow that uses the action (`uses: ./`) and run it with nektos/act in host
// mode (no Docker), against internal/fakegithub for the GitHub REST API. The tests skip
// when act is not on PATH (.ci/run installs it and sets KG_REQUIRE_TOOLS=1, which turns
// the skip into a failure: internal/needtool). Each act test runs in parallel with the
// others (its repository, HOME, act cache and fake API are its own): an act run is more
// waiting than computing, and this package is the longest of make test. What act does and
// does not do like GitHub's runner is written down in act_test.go. The package has no
// code of its own.
package acttest
