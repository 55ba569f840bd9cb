{{/*
Configuration of a component. Each chart that uses the library defines:

  <chart>.component    YAML: apiPort {name, appProtocol, env} (omitted when the component serves
                       no API) and probes {liveness, readiness, startup} (default handlers)
  <chart>.configData   YAML map of plain environment variables (the ConfigMap)
  <chart>.secretEnv    YAML list of {name, key}: variables read from .Values.existingSecret
  <chart>.extraEnv     YAML list of EnvVar (downward API and the like); may be empty
  <chart>.volumes      YAML list of Volumes beyond /tmp; may be empty
  <chart>.volumeMounts YAML list of VolumeMounts beyond /tmp; may be empty
  <chart>.validateValues  one problem a line; empty when the values are consistent
*/}}

{{- define "platform-lib.component" -}}
{{- include (printf "%s.component" .Chart.Name) . | fromYaml | toJson -}}
{{- end -}}

{{/*
A memory quantity in MiB (rounded down): 512Mi, 1Gi, 600M, 536870912. Empty when unset.
*/}}
{{- define "platform-lib.memoryMiB" -}}
{{- if or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .) -}}
{{- div (int64 .) 1048576 -}}
{{- else if . -}}
{{- $q := toString . -}}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" $q -}}
{{- $suffix := trimPrefix $number $q -}}
{{- $factors := dict "" 1.0 "k" 1000.0 "K" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 -}}
{{- if not (hasKey $factors $suffix) -}}
{{- fail (printf "cannot read the memory quantity %q (use Ki, Mi, Gi, k, M or G)" $q) -}}
{{- end -}}
{{- $bytes := mulf (float64 $number) (get $factors $suffix) -}}
{{- floor (divf $bytes 1048576.0) | int64 -}}
{{- end -}}
{{- end -}}

{{/*
A CPU quantity in millicores: 500m, 1, 1.5, 2.
*/}}
{{- define "platform-lib.cpuMillis" -}}
{{- $q := toString . -}}
{{- if hasSuffix "m" $q -}}
{{- trimSuffix "m" $q | float64 | floor | int64 -}}
{{- else -}}
{{- mulf (float64 $q) 1000.0 | floor | int64 -}}
{{- end -}}
{{- end -}}

{{/*
NODE_OPTIONS bounding V8's heap to the container: old space 5/8 of the memory limit (320 MiB in
a 512 MiB container, as measured for the cache in README), semi space limit/64 MiB between 1 and
64 (8 MiB at 512 MiB). Without a memory limit V8 sizes the heap from the node's memory and the
container is OOM-killed before it collects garbage. A component running several Node processes
in the container (`workers`, node:cluster: each inherits NODE_OPTIONS) shares both out among them.
nodeOptions is appended.
*/}}
{{- define "platform-lib.nodeOptions" -}}
{{- $options := list -}}
{{- $limit := "" -}}
{{- if and .Values.resources .Values.resources.limits -}}
{{- $limit = .Values.resources.limits.memory | default "" -}}
{{- end -}}
{{- if and .Values.heap.auto $limit -}}
{{- $mib := include "platform-lib.memoryMiB" $limit | int64 -}}
{{- $processes := max 1 (int64 (.Values.workers | default 1)) -}}
{{- $oldSpace := div (div (mul $mib 5) 8) $processes -}}
{{- $semiSpace := max 1 (min 64 (div (div $mib 64) $processes)) -}}
{{- $options = append $options (printf "--max-old-space-size=%d" $oldSpace) -}}
{{- $options = append $options (printf "--max-semi-space-size=%d" $semiSpace) -}}
{{- end -}}
{{- with .Values.heap.nodeOptions -}}
{{- $options = append $options . -}}
{{- end -}}
{{- join " " $options -}}
{{- end -}}

{{/* Time the service gets to drain after SIGTERM: what is left of the pod's grace period after preStop, less 2 s. */}}
{{- define "platform-lib.shutdownGraceMs" -}}
{{- $seconds := sub (sub (int .Values.terminationGracePeriodSeconds) (int .Values.preStopSleepSeconds)) 2 -}}
{{- mul (max 1 $seconds) 1000 -}}
{{- end -}}

{{/* The ConfigMap's data: settings every service reads, then the component's, then extraConfig. */}}
{{- define "platform-lib.configData" -}}
{{- $component := include "platform-lib.component" . | fromJson -}}
{{- $data := dict "Management__Port" (toString .Values.containerPorts.management) "Log__Level" .Values.logLevel "Shutdown__GracePeriodMs" (include "platform-lib.shutdownGraceMs" .) -}}
{{- with $component.apiPort -}}
{{- $_ := set $data .env (toString $.Values.containerPorts.api) -}}
{{- end -}}
{{- with include "platform-lib.otlpEndpoint" . -}}
{{- $_ := set $data "Otlp__Endpoint" . -}}
{{- end -}}
{{- range $name, $value := include (printf "%s.configData" .Chart.Name) . | fromYaml -}}
{{- if not (kindIs "invalid" $value) -}}
{{- $_ := set $data $name (toString $value) -}}
{{- end -}}
{{- end -}}
{{- range $name, $value := .Values.extraConfig -}}
{{- $_ := set $data $name (toString $value) -}}
{{- end -}}
{{- toYaml $data -}}
{{- end -}}

{{/* Variables from the existing Secret, as a YAML list of {name, key}. */}}
{{- define "platform-lib.secretEnv" -}}
{{- $list := include (printf "%s.secretEnv" .Chart.Name) . | fromYamlArray -}}
{{- toYaml $list -}}
{{- end -}}
