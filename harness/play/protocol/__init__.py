"""The engine protocol: bots in other processes and languages play through versioned JSON messages.

One protocol, two transports (DESIGN.md "Engines, the referee and serving"):

- :mod:`harness.play.protocol.messages` — the messages and their columnar batches (encode a batch of
  positions, decode and check an engine's answers), the rule set as data, the JSON Schema;
- :mod:`harness.play.protocol.stdio` — JSON lines over a subprocess's stdin and stdout;
- :mod:`harness.play.protocol.http` — the same messages as HTTP POST bodies;
- :mod:`harness.play.protocol.referee` — the ``engine`` bot: time budgets, faults, the time-out fallback;
- :mod:`harness.play.protocol.check` — ``yatzy-harness engine check``, the conformance checker.

The protocol itself is documented in ``docs/engines.md`` and ``harness/play/protocol/schema.json``.
"""

PROTOCOL = "yatzy-engine/1"
