{{/*
Names, labels and the few derived values every template of the flotilla-agent chart shares.
*/}}

{{- define "flotilla-agent.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "flotilla-agent.fullname" -}}
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

{{- define "flotilla-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "flotilla-agent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "flotilla-agent.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "flotilla-agent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: agent
app.kubernetes.io/part-of: flotilla
app.kubernetes.io/managed-by: {{ .Release.Service }}
flotilla.dev/cluster: {{ .Values.clusterName | quote }}
{{- end -}}

{{- define "flotilla-agent.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "flotilla-agent.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "flotilla-agent.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The windows ConfigMap's name: the owner's commands and the agent find it by this name. */}}
{{- define "flotilla-agent.windowsConfigMap" -}}
{{- default (printf "%s-windows" (include "flotilla-agent.fullname" .)) .Values.maintenanceWindows.configMapName -}}
{{- end -}}

{{/* The Secret holding the bootstrap token, or "" when there is none. */}}
{{- define "flotilla-agent.tokenSecret" -}}
{{- if .Values.bootstrapToken.existingSecret -}}
{{- .Values.bootstrapToken.existingSecret -}}
{{- else if .Values.bootstrapToken.value -}}
{{- printf "%s-bootstrap-token" (include "flotilla-agent.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/*
The hub's addresses as FLOTILLA_HUB takes them: hub.addresses joined by commas when set, else
hub.address.
*/}}
{{- define "flotilla-agent.hubAddresses" -}}
{{- if .Values.hub.addresses -}}
{{- join "," .Values.hub.addresses -}}
{{- else -}}
{{- .Values.hub.address -}}
{{- end -}}
{{- end -}}

{{/* Rules the install cannot work without; values.schema.json checks each value's shape. */}}
{{- define "flotilla-agent.validate" -}}
{{- if not .Values.clusterName -}}
{{- fail "clusterName is required: the name this cluster registers under at the hub" -}}
{{- end -}}
{{- if not (include "flotilla-agent.hubAddresses" .) -}}
{{- fail "hub.address is required: the hub's gRPC address, HOST:PORT (or hub.addresses, one per hub replica)" -}}
{{- end -}}
{{- if eq .Values.hub.tls.mode "tls" -}}
{{- $sources := 0 -}}
{{- if .Values.hub.tls.ca.pem }}{{ $sources = add1 $sources }}{{ end -}}
{{- if .Values.hub.tls.ca.existingConfigMap }}{{ $sources = add1 $sources }}{{ end -}}
{{- if .Values.hub.tls.ca.existingSecret }}{{ $sources = add1 $sources }}{{ end -}}
{{- if ne $sources 1 -}}
{{- fail (printf "hub.tls.ca: set exactly one of pem, existingConfigMap and existingSecret (found %d) when hub.tls.mode is tls" $sources) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Whether the state directory is a PersistentVolumeClaim: persistence.enabled, or when it is null
(the default) only for the simulated backend, whose identity lives there. The Kubernetes backend
keeps its identity in a Secret; its state directory then holds only progress.
*/}}
{{- define "flotilla-agent.persistent" -}}
{{- if kindIs "bool" .Values.persistence.enabled -}}
{{- if .Values.persistence.enabled }}true{{ end -}}
{{- else if eq .Values.backend.type "simulated" -}}
true
{{- end -}}
{{- end -}}

{{/* The Secret that keeps the Kubernetes backend's identity. */}}
{{- define "flotilla-agent.identitySecret" -}}
{{- default (printf "%s-identity" (include "flotilla-agent.fullname" .)) .Values.backend.kubernetes.identitySecret -}}
{{- end -}}
