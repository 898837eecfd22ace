// Package check renders the Helm chart with its default values and with each example values
// file, and decodes every object strictly into its Kubernetes API type (k8s.io/api, and the
// Prometheus Operator's for ServiceMonitor and PodMonitor): a misspelled or misplaced field
// fails here, offline, not at `helm install`. The rendered tsbench config must pass
// `tsbench validate`. Its own module keeps k8s.io out of tsbench's dependencies.
package check

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const root = "../../.."

// kinds maps apiVersion/kind to a new object of its type.
var kinds = map[string]func() any{
	"v1/ConfigMap":        func() any { return &corev1.ConfigMap{} },
	"v1/Service":          func() any { return &corev1.Service{} },
	"apps/v1/StatefulSet": func() any { return &appsv1.StatefulSet{} },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return &monitoringv1.ServiceMonitor{} },
	"monitoring.coreos.com/v1/PodMonitor":     func() any { return &monitoringv1.PodMonitor{} },
}

func TestRenderedObjectsMatchSchema(t *testing.T) {
	examples, err := filepath.Glob(filepath.Join(root, "examples", "helm-*.yaml"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples/helm-*.yaml: %v", err)
	}
	cases := map[string][]string{
		"defaults": nil,
		// Every optional object on, so that each template is checked.
		"monitors": {"--set", "serviceMonitor.enabled=true", "--set", "podMonitor.enabled=true", "--set", "shards=3",
			"--set", "writeReplicaCPU=2", "--set", "writeReplicaMem=4Gi", "--set", "nodeSelector.pool=bench"},
	}
	for _, e := range examples {
		cases[filepath.Base(e)] = []string{"-f", e}
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			seen := map[string]int{}
			for i, doc := range render(t, args) {
				var head struct{ APIVersion, Kind string }
				if err := yaml.Unmarshal(doc, &head); err != nil {
					t.Fatalf("object %d: %v", i, err)
				}
				newObj, ok := kinds[head.APIVersion+"/"+head.Kind]
				if !ok {
					t.Errorf("object %d: %s %s has no schema here: add its type to kinds", i, head.APIVersion, head.Kind)
					continue
				}
				obj := newObj()
				if err := yaml.UnmarshalStrict(doc, obj); err != nil {
					t.Errorf("%s %d does not match the Kubernetes schema: %v\n%s", head.Kind, i, err, doc)
					continue
				}
				seen[head.Kind]++
				if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Data["config.yaml"] != "" {
					validate(t, cm.Data["config.yaml"])
				}
				if ss, ok := obj.(*appsv1.StatefulSet); ok {
					checkStatefulSet(t, ss)
				}
			}
			for _, kind := range []string{"StatefulSet", "Service", "ConfigMap"} {
				if seen[kind] == 0 {
					t.Errorf("no %s rendered", kind)
				}
			}
			if name == "monitors" && (seen["ServiceMonitor"] != 1 || seen["PodMonitor"] != 1) {
				t.Errorf("monitors enabled, rendered %v", seen)
			}
		})
	}
}

// checkStatefulSet: the shard count in the args is the replica count, and requests are set.
func checkStatefulSet(t *testing.T, ss *appsv1.StatefulSet) {
	t.Helper()
	c := ss.Spec.Template.Spec.Containers[0]
	want := fmt.Sprintf("-shard=$(POD_INDEX)/%d", *ss.Spec.Replicas)
	if !strings.Contains(strings.Join(c.Args, " "), want) {
		t.Errorf("args %q lack %s", c.Args, want)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("requests %v: want cpu and memory", c.Resources.Requests)
	}
}

// render runs helm template on the chart and splits its output into objects.
func render(t *testing.T, args []string) [][]byte {
	t.Helper()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if strings.HasPrefix(a, root) {
			args[i] = filepath.Join(abs, strings.TrimPrefix(a, root))
		}
	}
	cmd := exec.Command("go", append([]string{"tool", "-modfile=tools/helm/go.mod", "helm", "template", "bench", "deploy/helm/tsbench"}, args...)...)
	cmd.Dir = abs
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm template %v: %v\n%s", args, err, stderr.String())
	}
	var docs [][]byte
	for _, d := range bytes.Split(out.Bytes(), []byte("\n---\n")) {
		if len(bytes.TrimSpace(stripComments(d))) > 0 {
			docs = append(docs, d)
		}
	}
	return docs
}

func stripComments(b []byte) []byte {
	var keep [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) && !bytes.Equal(bytes.TrimSpace(l), []byte("---")) {
			keep = append(keep, l)
		}
	}
	return bytes.Join(keep, []byte("\n"))
}

// validate runs tsbench validate on a rendered config.
func validate(t *testing.T, config string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./cmd/tsbench", "validate", "-config", path)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("tsbench validate of the rendered config: %v\n%s\n%s", err, out, config)
	}
}
