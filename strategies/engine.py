"""External engines at the table: the ``engine`` bot (:mod:`harness.protocol.referee`), registered here."""

from harness.protocol.referee import EngineStrategy
from harness.registry import register

register(EngineStrategy)
