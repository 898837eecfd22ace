package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// nameKeys adds the key path to each "line N:" of a YAML decoding error, so the user reads
// "line 3 (remoteStorages.vm.writeURL): cannot unmarshal ..." instead of a bare line number.
func nameKeys(doc []byte, err error) error {
	lineRef := regexp.MustCompile(`line (\d+): `)
	var root yaml.Node
	if yaml.Unmarshal(doc, &root) != nil {
		return err
	}
	keys := map[int]string{}
	collectKeys(&root, "", keys)
	msg := lineRef.ReplaceAllStringFunc(err.Error(), func(m string) string {
		n, _ := strconv.Atoi(lineRef.FindStringSubmatch(m)[1])
		if k, ok := keys[n]; ok {
			return fmt.Sprintf("line %d (%s): ", n, k)
		}
		return m
	})
	return errors.New(msg)
}

// collectKeys maps the line of every mapping key (and of its scalar value) to its key path.
func collectKeys(n *yaml.Node, path string, keys map[int]string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			collectKeys(c, path, keys)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if _, seen := keys[k.Line]; !seen {
				keys[k.Line] = p
			}
			if _, seen := keys[v.Line]; !seen {
				keys[v.Line] = p
			}
			collectKeys(v, p, keys)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			collectKeys(c, fmt.Sprintf("%s[%d]", path, i), keys)
		}
	}
}
