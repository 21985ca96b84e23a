module github.com/kernel-gate/kernel-gate

go 1.26.8

require (
	github.com/Masterminds/semver/v3 v3.5.0 // indirect
	github.com/google/go-github/v60 v60.0.0 // indirect
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724 // indirect
	github.com/sethvargo/go-envconfig v0.8.0 // indirect
	github.com/sethvargo/go-githubactions v1.3.1 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
