// DssBatch validates many PDFs in one JVM with the EU DSS library, the
// way ../shared/tools/validators/dss validates one (offline: only what
// the PDF embeds and the trust anchors given), so that a test can compare
// quire's verdicts with the reference validator's without a JVM start per
// file. Run in source-file mode:
//
//   java -cp 'dss-lib/*' DssBatch.java MANIFEST [POLICY.xml]
//
// MANIFEST has one line per file: PATH, a tab, and comma-separated PEM
// files of trust anchors. For each file it prints "file\tPATH", then per
// signature "signature\tFIELD\tFORMAT\tINDICATION\tSUBINDICATION".
import eu.europa.esig.dss.diagnostic.DiagnosticData;
import eu.europa.esig.dss.diagnostic.SignatureWrapper;
import eu.europa.esig.dss.model.FileDocument;
import eu.europa.esig.dss.model.x509.CertificateToken;
import eu.europa.esig.dss.simplereport.SimpleReport;
import eu.europa.esig.dss.spi.validation.CommonCertificateVerifier;
import eu.europa.esig.dss.spi.x509.CommonTrustedCertificateSource;
import eu.europa.esig.dss.validation.SignedDocumentValidator;
import eu.europa.esig.dss.validation.reports.Reports;

import java.io.File;
import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;

public class DssBatch {
    public static void main(String[] args) throws Exception {
        File policy = args.length > 1 ? new File(args[1]) : null;
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            if (line.isBlank()) {
                continue;
            }
            String[] parts = line.split("\t");
            CommonTrustedCertificateSource trusted = new CommonTrustedCertificateSource();
            if (parts.length > 1) {
                for (String pem : parts[1].split(",")) {
                    try (InputStream in = new FileInputStream(pem)) {
                        for (Certificate c : cf.generateCertificates(in)) {
                            trusted.addCertificate(new CertificateToken((X509Certificate) c));
                        }
                    }
                }
            }
            CommonCertificateVerifier verifier = new CommonCertificateVerifier(true);
            verifier.setAIASource(null);
            verifier.setCrlSource(null);
            verifier.setOcspSource(null);
            verifier.setTrustedCertSources(trusted);
            System.out.println("file\t" + parts[0]);
            try {
                SignedDocumentValidator v = SignedDocumentValidator.fromDocument(new FileDocument(parts[0]));
                v.setCertificateVerifier(verifier);
                Reports r = policy == null ? v.validateDocument() : v.validateDocument(policy);
                SimpleReport s = r.getSimpleReport();
                DiagnosticData dd = r.getDiagnosticData();
                for (String id : s.getSignatureIdList()) {
                    SignatureWrapper w = dd.getSignatureById(id);
                    String field = w.getPDFRevision() == null ? "?" : w.getPDFRevision().getFirstFieldName();
                    System.out.println("signature\t" + field + "\t" + s.getSignatureFormat(id) + "\t" + s.getIndication(id) + "\t" + s.getSubIndication(id));
                }
            } catch (Exception e) {
                System.out.println("error\t" + e);
            }
        }
    }
}
