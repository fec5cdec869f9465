// The go-yaml oracle's recorder (main.go; `make goyaml-oracle`). Pinned to what Helm v3.21.4
// builds with (its go.mod): go.yaml.in/yaml/v2 v2.4.4, go.yaml.in/yaml/v3 v3.0.4 (through
// sigs.k8s.io/yaml/goyaml.v3, as Helm's toYamlPretty imports it), sigs.k8s.io/yaml v1.6.0,
// github.com/BurntSushi/toml v1.6.0.
module capstan.dev/goyaml-oracle

go 1.26

require (
	github.com/BurntSushi/toml v1.6.0
	go.yaml.in/yaml/v2 v2.4.4
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v3 v3.0.4 // indirect
