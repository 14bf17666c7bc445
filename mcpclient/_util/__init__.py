"""Small helpers every layer may use: threads and lanes, wire logging, fork detection, lazy
imports, atomic files, the ``DEFAULT`` marker.

Imports: ``errors`` only (and the standard library). Nothing here knows MCP.
"""
