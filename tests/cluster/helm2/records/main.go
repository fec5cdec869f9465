// helm2-records converts a Tiller release record between its stored form (the
// `release` value of a Tiller ConfigMap: base64 of gzip of the hapi.release.Release
// protobuf) and JSON, with Helm 2.17.0's own storage driver code, so tests can check
// records written by other code against real Helm 2.
//
//	helm2-records decode   < data.release string  > release JSON
//	helm2-records encode   < release JSON         > data.release string
//
// Both go through k8s.io/helm/pkg/storage/driver's ConfigMaps driver (over a fake
// clientset): decode is its Get, encode its Create, so the codec is exactly Tiller's.
// The JSON is encoding/json over the generated Go types (snake_case proto field names,
// enums as numbers, bytes as base64, timestamps as {"seconds","nanos"}, zero values left
// out), which round-trips losslessly.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	rspb "k8s.io/helm/pkg/proto/hapi/release"
	"k8s.io/helm/pkg/storage/driver"
)

const (
	namespace = "kube-system"
	key       = "record.v1" // a ConfigMap name; Tiller uses <release>.v<version>
)

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "decode" && os.Args[1] != "encode") {
		fmt.Fprintln(os.Stderr, "usage: helm2-records decode|encode  (reads stdin, writes stdout)")
		os.Exit(2)
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	var out string
	if os.Args[1] == "decode" {
		out, err = decode(strings.TrimSpace(string(in)))
	} else {
		out, err = encode(in)
	}
	if err != nil {
		fail(err)
	}
	fmt.Println(out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "helm2-records:", err)
	os.Exit(1)
}

// decode stores the string as a ConfigMap's data.release and reads it back with the
// driver's Get, which base64-decodes, gunzips (when the gzip magic is there) and
// unmarshals it.
func decode(data string) (out string, err error) {
	if data == "" {
		return "", fmt.Errorf("empty input: expected a ConfigMap's data.release string")
	}
	// Helm's decodeRelease slices the first three bytes unchecked: report, do not crash.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Helm's decoder panicked on this input: %v", r)
		}
	}()
	client := fake.NewSimpleClientset()
	cm := &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: key, Namespace: namespace},
		Data:       map[string]string{"release": data},
	}
	if _, err := client.CoreV1().ConfigMaps(namespace).Create(cm); err != nil {
		return "", err
	}
	rls, err := driver.NewConfigMaps(client.CoreV1().ConfigMaps(namespace)).Get(key)
	if err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(rls, "", "  ")
	return string(b), err
}

// encode has the driver's Create store the release and returns the data.release value
// it wrote.
func encode(in []byte) (string, error) {
	var rls rspb.Release
	if err := json.Unmarshal(in, &rls); err != nil {
		return "", err
	}
	if rls.Info == nil || rls.Info.Status == nil {
		return "", fmt.Errorf("the release has no info.status (Tiller's Create needs it for the STATUS label)")
	}
	client := fake.NewSimpleClientset()
	if err := driver.NewConfigMaps(client.CoreV1().ConfigMaps(namespace)).Create(key, &rls); err != nil {
		return "", err
	}
	cm, err := client.CoreV1().ConfigMaps(namespace).Get(key, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return cm.Data["release"], nil
}
