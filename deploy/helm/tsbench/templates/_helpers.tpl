{{/* The release's name for every object: <release>-tsbench, or <release> when it has tsbench in it. */}}
{{- define "tsbench.fullname" -}}
{{- if contains "tsbench" .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-tsbench" .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "tsbench.selectorLabels" -}}
app.kubernetes.io/name: tsbench
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "tsbench.labels" -}}
{{ include "tsbench.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* seconds turns a Go duration ("10s", "1m30s", "500ms", "2h") into seconds. */}}
{{- define "tsbench.seconds" -}}
{{- $total := 0.0 -}}
{{- range regexFindAll "[0-9.]+(ms|h|m|s)" (toString .) -1 -}}
{{- $unit := regexFind "(ms|h|m|s)$" . -}}
{{- $n := float64 (trimSuffix $unit .) -}}
{{- $mult := dict "ms" 0.001 "s" 1.0 "m" 60.0 "h" 3600.0 -}}
{{- $total = addf $total (mulf $n (get $mult $unit)) -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/* samplesPerShard: targetsCount × writeReplicas × 839 series / scrapeInterval / shards. */}}
{{- define "tsbench.samplesPerShard" -}}
{{- $interval := include "tsbench.seconds" .Values.scrapeInterval | float64 -}}
{{- if le $interval 0.0 -}}{{- fail "scrapeInterval: must be a duration > 0 (e.g. 10s)" -}}{{- end -}}
{{- $series := mulf .Values.targetsCount (max 1 (.Values.writeReplicas | default 1 | int)) 839 -}}
{{- divf (divf $series $interval) (max 1 (int .Values.shards)) -}}
{{- end -}}

{{/* storagesWritten: remoteStorages without disableWrite. */}}
{{- define "tsbench.storagesWritten" -}}
{{- $n := 0 -}}
{{- range $name, $st := .Values.remoteStorages -}}
{{- if not (and (kindIs "map" $st) $st.disableWrite) -}}{{- $n = add1 $n -}}{{- end -}}
{{- end -}}
{{- $n -}}
{{- end -}}

{{/* resources: values' resources, or sized from the measured rate (values.yaml says how). */}}
{{- define "tsbench.resources" -}}
{{- if .Values.resources -}}
{{- toYaml .Values.resources -}}
{{- else -}}
{{- $rate := include "tsbench.samplesPerShard" . | float64 -}}
{{- $cpu := max 100 (int (ceil (divf (mulf 1000 $rate .Values.cpuHeadroom) .Values.samplesPerCore))) -}}
{{- $pending := .Values.maxPendingSamples | default 10000000 | float64 -}}
{{- $storages := include "tsbench.storagesWritten" . | int -}}
{{- $mem := add 64 (int (ceil (divf (mulf $pending 17 $storages) 1048576))) -}}
requests:
  cpu: {{ $cpu }}m
  memory: {{ $mem }}Mi
{{- if or .Values.writeReplicaCPU .Values.writeReplicaMem }}
limits:
  {{- with .Values.writeReplicaCPU }}
  cpu: {{ . }}
  {{- end }}
  {{- with .Values.writeReplicaMem }}
  memory: {{ . }}
  {{- end }}
{{- end }}
{{- end -}}
{{- end -}}

{{/* config: the values minus the chart's own keys, with startTime fixed at install. */}}
{{- define "tsbench.config" -}}
{{- $cfg := omit .Values "shards" "image" "startDelay" "samplesPerCore" "cpuHeadroom" "resources" "serviceMonitor" "podMonitor" "grafanaDashboard" "nodeSelector" "tolerations" "writeReplicaCPU" "writeReplicaMem" "shard" -}}
{{- if not .Values.startTime -}}
{{- $delay := include "tsbench.seconds" .Values.startDelay | float64 | int -}}
{{- $_ := set $cfg "startTime" (dateInZone "2006-01-02T15:04:05Z" (now | dateModify (printf "+%ds" $delay)) "UTC") -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}
