"""The ground: records, columns, devices and networks, argument checks.

Imports nothing else of the package."""
