"""The image's SBOM: merge the Debian packages (dpkg) into cyclonedx-py's CycloneDX SBOM of the venv.

Runs in the Dockerfile's ``sbom`` stage, bind-mounted there with the cyclonedx tool's venv, so
neither is in the image; only the merged ``sbom.cdx.json`` is. Standard library only, except
``--validate``, which uses cyclonedx-python-lib (the tool venv has it). Never imports the builder.
"""
