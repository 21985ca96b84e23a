module github.com/kernel-gate/kernel-gate

go 1.26.8

require (
	github.com/Masterminds/semver/v3 v3.5.0
	github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794
	github.com/google/go-github/v60 v60.0.0
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	github.com/sethvargo/go-githubactions v1.3.1
	golang.org/x/perf v0.0.0-20260908200009-22c9c6c9d4da
	gonum.org/v1/gonum v0.17.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/yuin/goldmark v1.8.7
	mvdan.cc/sh/v3 v3.14.1
)

require github.com/google/go-querystring v1.1.0 // indirect
