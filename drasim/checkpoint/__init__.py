"""The kubelet's ``dra_manager_state`` checkpoint: a pure codec and a file store.

Deliberately empty of imports: :mod:`drasim.checkpoint.codec` (pure, no I/O) and
:mod:`drasim.checkpoint.store` (file I/O) sit in different layers, so importing
one must not pull in the other.
"""
