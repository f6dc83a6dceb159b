# quire's image: the quire binary on Debian 12 with LibreOffice Writer, the
# fonts of scripts/setup and jemalloc, run as an unprivileged user.
#
#   docker build -t quire .            (podman build -t quire . works too)
#   docker run -p 8080:8080 -v quire-data:/data quire
#
# Settings are the QUIRE_* variables (docs/configuration.md); the data
# directory is the /data volume. compose.yaml runs two instances on
# PostgreSQL behind a proxy. make test-image builds and exercises this file.

# Build: Debian 12's Go (1.19) is too old; Go 1.23 from bookworm-backports
# fetches the version go.mod names (GOTOOLCHAIN=auto) through the module
# proxy. cgo builds against LibreOfficeKit's headers, those of the
# LibreOffice the image runs (bookworm-backports', 25.2 today).
FROM debian:bookworm-slim AS build
RUN echo 'deb http://deb.debian.org/debian bookworm-backports main' >/etc/apt/sources.list.d/backports.list \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      ca-certificates gcc libc6-dev \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t bookworm-backports golang-1.23-go libreofficekit-dev \
 && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/lib/go-1.23/bin:/usr/local/bin:/usr/bin:/bin GOTOOLCHAIN=auto CGO_ENABLED=1
# Behind a TLS-intercepting egress proxy, pass its CA bundle for the module
# downloads: --volume /etc/ssl/certs/ca-certificates.crt:/build-ca.crt:ro
# --build-arg SSL_CERT_FILE=/build-ca.crt (make test-image does).
ARG SSL_CERT_FILE
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=${VERSION}" -o /out/quire ./cmd/quire

# Run: LibreOffice Writer, Calc and Impress without a GUI (Calc from the
# full package: LibreOfficeKit needs its .ui files to load a spreadsheet)
# from bookworm-backports (25.2 today, what peers ship; Debian 12's own is
# 7.4), metric-compatible fonts (Word documents keep their layout), the
# certificate pages' fonts, jemalloc (the conversion workers preload it),
# Chromium's headless shell (HTML and Markdown to PDF: the program made for
# automation, without the full browser's window and UI).
FROM debian:bookworm-slim
RUN echo 'deb http://deb.debian.org/debian bookworm-backports main' >/etc/apt/sources.list.d/backports.list \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t bookworm-backports \
      libreoffice-writer-nogui libreoffice-calc libreoffice-impress-nogui \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      ca-certificates libjemalloc2 chromium-headless-shell poppler-utils \
      fonts-crosextra-carlito fonts-crosextra-caladea fonts-liberation2 fonts-dejavu fonts-dejavu-core fonts-wqy-zenhei fonts-noto-core fonts-symbola fonts-kristi \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /data --no-create-home --shell /usr/sbin/nologin quire \
 && mkdir -p /data && chown quire:quire /data && chmod 0700 /data
COPY --from=build /out/quire /usr/local/bin/quire
ENV QUIRE_DATA_DIR=/data QUIRE_ADDR=:8080
VOLUME /data
EXPOSE 8080
USER quire
# SIGTERM: quire finishes the requests in flight, stops the conversion
# workers and exits 0 (QUIRE_SHUTDOWN_TIMEOUT, 30 s: give docker stop -t 45).
STOPSIGNAL SIGTERM
# The image has no curl: quire probes itself. Liveness: an orchestrator
# restarting unhealthy containers must not restart them for a database
# outage; load balancers ask /v1/health (readiness) themselves.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["quire", "health", "--live"]
ENTRYPOINT ["quire"]
CMD ["serve"]
