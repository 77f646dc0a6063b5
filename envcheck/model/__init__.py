"""Pure data records: reports, findings, plans. No I/O."""

from envcheck.model.report import SCHEMA_VERSION, NodeReport
from envcheck.model.section import Section, Status

__all__ = ["SCHEMA_VERSION", "NodeReport", "Section", "Status"]
