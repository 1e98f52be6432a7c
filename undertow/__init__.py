"""undertow: distributed evaluation of tool-using LLM agents under tool failures.

The installed package. In the repository its subpackages are the top-level folders (``cluster/``, ``workers/``,
``env_core/``, ``retrieval/``, ``scoring/``, ``storage/``) reached through relative symlinks here; the wheel holds
them as plain folders. This module imports nothing: the CodeAct kernel's file-system view gives it an empty
``undertow/__init__.py``, and a bare ``import undertow`` must stay cheap.
"""

__version__ = "0.1.0"
