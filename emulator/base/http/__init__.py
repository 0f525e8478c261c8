"""The Kubernetes HTTP API in front of the emulator's API server (``python -m emulator serve``).

A thin door: an HTTP request becomes a verb on ``emulator.base.apiserver.ApiServer`` — the same
store, defaulting, validation, admission and watch hub the in-process agents use — and the
answer (an object, a list, a ``meta.k8s.io/v1`` Table, a watch stream, a ``Status``) is
written as upstream's kube-apiserver writes it, so that kubectl and the official Python
client work unchanged.

=================  ==============================================================
module             owns
=================  ==============================================================
``resources``      the served resources: plural, kind, group, scope, short names,
                   categories, verbs, subresources (one table everything reads)
``discovery``      /version, aggregated and legacy discovery, /openapi/v3 (``respond``)
``openapi``        the /openapi/v3 documents: paths, operations, GVKs, the cache
``openapi_schemas`` components.schemas generated from the Structs, upstream's names
``schema_docs``    the descriptions ``kubectl explain`` prints
``tables``         Table columns and the Table envelope per resource
``printers``       the cells of each resource's row (upstream's printers)
``cells``          the cell formats rows share (HumanDuration, labels, selectors)
``patch``          strategic merge patch and the merge-key table per kind
``jsonpatch``      JSON patch (RFC 6902); merge patch (RFC 7386) is ``emulator.base.api.mergepatch``
``apply``          server-side apply: FieldManagers, managedFields, conflicts
``extras``         fields the Structs do not model: kept per uid from HTTP writes, served
                   back, inherited by controller-made children from their owner's template
``server``         the aiohttp application: routing, auth, limits, verbs, watch
``calls``          a call and its answer, the verb of a method, ``dryRun``
``verbs``          each verb on a main resource (get, list, create, update, patch, delete)
``subresources``   binding, eviction and scale
``health``         /healthz, /livez, /readyz (all checks pass, upstream's wording)
``reviews``        auth can-i / whoami: the self reviews, always allowed (no RBAC)
``logs``           pods/<name>/log: an empty log, or upstream's 400s
``protobuf``       protobuf request bodies in: upstream's envelope, a wire reader
``protobuf_encode`` protobuf answers out: envelope, messages, watch frames
``protobuf_schema`` the message tables (lazily loaded ``data/protobuf_messages.json``)
``protobuf_gen``   writes those tables from upstream's generated.proto and Go tags
=================  ==============================================================
"""
