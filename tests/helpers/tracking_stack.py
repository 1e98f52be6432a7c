"""The real S3 server (SeaweedFS) and MLflow tracking server, started for tests through the same script users run
(``infra/local-services.sh``), on free loopback ports, with their data in a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from helpers.paths import REPO
from helpers.ports import free_port_block

SCRIPT = REPO / "infra" / "local-services.sh"
BUCKET = "undertow"
S3_PORTS = 8  # SeaweedFS listens on the S3 port and the 7 after it


@dataclass
class TrackingStack:
    folder: Path
    s3_port: int
    mlflow_port: int
    key: str = "undertow-test"
    secret: str = "undertow-test-secret"

    @classmethod
    def allocate(cls, folder: Path) -> TrackingStack:
        base = free_port_block(S3_PORTS + 1)
        return cls(folder=folder, s3_port=base, mlflow_port=base + S3_PORTS)

    @property
    def s3_url(self) -> str:
        return f"http://127.0.0.1:{self.s3_port}"

    @property
    def mlflow_url(self) -> str:
        return f"http://127.0.0.1:{self.mlflow_port}"

    def env(self) -> dict[str, str]:
        """What a client process needs to use the services (the standard AWS variables)."""
        return {
            "AWS_ACCESS_KEY_ID": self.key,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_ENDPOINT_URL_S3": self.s3_url,
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def script(self, *args: str) -> str:
        env = {
            **os.environ,
            **self.env(),
            "UNDERTOW_SERVICES_DIR": str(self.folder),
            "UNDERTOW_S3_PORT": str(self.s3_port),
            "UNDERTOW_MLFLOW_PORT": str(self.mlflow_port),
            "UNDERTOW_BUCKET": BUCKET,
            "UNDERTOW_BIN": str(Path(sys.executable).parent),
        }
        done = subprocess.run(
            ["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=180, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"local-services.sh {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def up(self, which: str = "all") -> None:
        self.script("up", which)
        if which in ("s3", "all"):
            self.wait_for_s3_reads()

    def wait_for_s3_reads(self, timeout_s: float = 60.0) -> None:
        """Until a written object reads back: after a restart SeaweedFS's gateway answers before its volume server
        serves data (a GetObject then fails with InternalError), and the script only waits for the gateway."""
        client = self.s3_client()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                client.put_object(Bucket=BUCKET, Key="readiness-probe", Body=b"ok")
                if client.get_object(Bucket=BUCKET, Key="readiness-probe")["Body"].read() == b"ok":
                    return
            except Exception:  # any error of a server still starting: try again until the deadline
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.5)

    def down(self, which: str = "all") -> None:
        self.script("down", which)

    def s3_client(self, secret: str | None = None):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.s3_url,
            aws_access_key_id=self.key,
            aws_secret_access_key=secret or self.secret,
            region_name="us-east-1",
        )
