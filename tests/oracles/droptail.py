"""DropTail: every packet passes; the port's buffer limit does the dropping."""

from __future__ import annotations

from . import Oracle


class DropTail(Oracle):
    kind = "droptail"

    def on_arrival(self, ev: dict) -> str:
        self.hit("pass")
        return "pass"
