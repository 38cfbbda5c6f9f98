{{/*
Names, labels and the few derived values every template of the flotilla-hub chart shares.
*/}}

{{- define "flotilla-hub.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "flotilla-hub.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "flotilla-hub.selectorLabels" -}}
app.kubernetes.io/name: {{ include "flotilla-hub.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "flotilla-hub.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "flotilla-hub.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: hub
app.kubernetes.io/part-of: flotilla
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "flotilla-hub.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "flotilla-hub.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "flotilla-hub.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
The serving certificate's names: the Service's names in the cluster (the headless Service's too
when it is enabled), then tls.sans.
*/}}
{{- define "flotilla-hub.sans" -}}
{{- $svc := include "flotilla-hub.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- $services := list $svc -}}
{{- if .Values.service.headless.enabled -}}
{{- $services = append $services (printf "%s-headless" $svc) -}}
{{- end -}}
{{- $names := list -}}
{{- range $services -}}
{{- $names = concat $names (list . (printf "%s.%s" . $ns) (printf "%s.%s.svc" . $ns) (printf "%s.%s.svc.%s" . $ns $.Values.tls.clusterDomain)) -}}
{{- end -}}
{{- concat $names (list "localhost" "127.0.0.1") .Values.tls.sans | uniq | join "," -}}
{{- end -}}

{{/* The Secret holding the admin token file, or "" when there is none. */}}
{{- define "flotilla-hub.adminTokensSecret" -}}
{{- if .Values.adminTokens.existingSecret -}}
{{- .Values.adminTokens.existingSecret -}}
{{- else if .Values.adminTokens.tokens -}}
{{- printf "%s-admin-tokens" (include "flotilla-hub.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The NATS servers, comma-separated: nats.url (the older form) when set, else nats.urls. */}}
{{- define "flotilla-hub.natsServers" -}}
{{- if .Values.nats.url -}}
{{- .Values.nats.url -}}
{{- else -}}
{{- join "," .Values.nats.urls -}}
{{- end -}}
{{- end -}}

{{/*
The pods' affinity: the affinity value, plus with several replicas a podAntiAffinity spreading
them over podAntiAffinity.topologyKeys (unless affinity has its own). YAML, "{}" when empty.
*/}}
{{- define "flotilla-hub.affinity" -}}
{{- $affinity := deepCopy .Values.affinity -}}
{{- $spread := .Values.podAntiAffinity -}}
{{- if and (gt (int .Values.replicaCount) 1) (ne $spread.mode "none") $spread.topologyKeys (not (hasKey $affinity "podAntiAffinity")) -}}
{{- $selector := dict "matchLabels" (include "flotilla-hub.selectorLabels" . | fromYaml) -}}
{{- $terms := list -}}
{{- range $spread.topologyKeys -}}
{{- $term := dict "topologyKey" . "labelSelector" $selector -}}
{{- if eq $spread.mode "required" -}}
{{- $terms = append $terms $term -}}
{{- else -}}
{{- $terms = append $terms (dict "weight" 100 "podAffinityTerm" $term) -}}
{{- end -}}
{{- end -}}
{{- $rule := ternary "requiredDuringSchedulingIgnoredDuringExecution" "preferredDuringSchedulingIgnoredDuringExecution" (eq $spread.mode "required") -}}
{{- $_ := set $affinity "podAntiAffinity" (dict $rule $terms) -}}
{{- end -}}
{{- toYaml $affinity -}}
{{- end -}}
