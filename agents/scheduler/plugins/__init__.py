"""The in-tree scheduler plugins: one module per upstream plugin, named after it.

==============================  =====================  =========================================
module                          ``NAME``               extension points
==============================  =====================  =========================================
``schedulinggates``             SchedulingGates        PreEnqueue
``queuesort``                   PrioritySort           QueueSort
``nodeunschedulable``           NodeUnschedulable      Filter
``nodename``                    NodeName               Filter
``tainttoleration``             TaintToleration        Filter, PreScore, Score
``nodeaffinity``                NodeAffinity           PreFilter, Filter, PreScore, Score
``nodeports``                   NodePorts              PreFilter, Filter
``noderesources_fit``           NodeResourcesFit       PreFilter, Filter, PreScore, Score
``volumerestrictions``          VolumeRestrictions     PreFilter, Filter
``nodevolumelimits``            NodeVolumeLimits       PreFilter, Filter
``volumebinding`` (package)     VolumeBinding          PreFilter, Filter, PreScore, Score,
                                                       Reserve, PreBind
``volumezone``                  VolumeZone             PreFilter, Filter
``podtopologyspread``           PodTopologySpread      PreFilter, Filter, PreScore, Score
``interpodaffinity``            InterPodAffinity       PreFilter, Filter, PreScore, Score
``dynamicresources`` (package)  DynamicResources       PreEnqueue, PreFilter, Filter, PostFilter,
                                                       Reserve, PreBind (and the structured
                                                       allocator)
``defaultpreemption``           DefaultPreemption      PreEnqueue, PostFilter
``noderesources_balanced_      NodeResourcesBalanced  PreScore, Score
allocation``                    Allocation
``imagelocality``               ImageLocality          Score
``defaultbinder``               DefaultBinder          Bind
==============================  =====================  =========================================

Every plugin is a plain class built as ``Class(args, handle)`` (the registry's factory
signature), with upstream's name as ``NAME`` and as its ``name`` attribute, upstream's reasons,
and ``events_to_register()`` with upstream's v1.34 events and queueing hints (QueueingHints are
GA in v1.34, so the QHint-on registrations are the ones reproduced). Plugins never import each
other; shared arithmetic lives in ``emulator.base.api.resources``, ``framework.types`` and ``helper``
(upstream's ``plugins/helper``: score normalization, and the pod's claims and the storage
listers the volume plugins share), typed args in ``agents.scheduler.args``. The volume plugins
read the scheduler's storage informers (``agents.scheduler.volume_listers``) through their
handle's ``volume_listers``; DynamicResources reads claims, slices and classes through the
handle's ``dra_manager`` (``agents.scheduler.dra_manager``).
The registry is ``agents.scheduler.registry``.
"""
