package action

import "github.com/kernel-gate/kernel-gate/internal/githubapi"

// api is the options of every API client of the run (the check run's, the baseline
// store's, the trend's): one Budget for all of them, so that a GitHub that is down or
// never answers holds the run for githubapi.DefaultBudget at most, whatever it reports.
func (r *run) api() githubapi.Options {
	return githubapi.Options{APIURL: r.o.Getenv("GITHUB_API_URL"), Token: r.in.Token, Repository: r.ev.Repository,
		HTTPClient: r.o.HTTPClient, Sleep: r.o.Sleep, Log: r.o.Log,
		RequestTimeout: r.o.APIRequestTimeout, Budget: r.budget}
}
