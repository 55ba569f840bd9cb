{{/* Object name of a component of this release: (dict "root" $ "component" "cache"). */}}
{{- define "subscription-platform.componentName" -}}
{{- $values := index .root.Values .component | default dict -}}
{{- $values.fullnameOverride | default (printf "%s-%s" .root.Release.Name .component) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Rules across components, failing with every problem at once: a component that calls another
needs it enabled in this release or its address set.
*/}}
{{- define "subscription-platform.validateValues" -}}
{{- $messages := list -}}
{{- $cache := .Values.cache -}}
{{- range $caller := list "auth" "webhooks" -}}
{{- $values := index $.Values $caller -}}
{{- if and $values.enabled (not $cache.enabled) (not (($values.cache | default dict).url)) -}}
{{- $messages = append $messages (printf "%s.cache.url: the cache is disabled in this release (cache.enabled=false); enable it or set %s.cache.url to another cache service" $caller $caller) -}}
{{- end -}}
{{- end -}}
{{- $controller := index .Values "graph-controller" -}}
{{- $registry := index .Values "graph-registry" -}}
{{- if and $controller.enabled (not $registry.enabled) (not (($controller.registry | default dict).url)) -}}
{{- $messages = append $messages "graph-controller.registry.url: the graph registry is disabled in this release (graph-registry.enabled=false); enable it or set graph-controller.registry.url" -}}
{{- end -}}
{{- if $messages -}}
{{- printf "\nVALUES VALIDATION (subscription-platform):\n  - %s" (join "\n  - " $messages) | fail -}}
{{- end -}}
{{- end -}}
