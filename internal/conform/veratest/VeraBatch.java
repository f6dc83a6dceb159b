// VeraBatch validates several PDF files against one flavour in one JVM
// (veraPDF's own wrapper takes one file, and the JVM's start dominates).
// usage: java -cp 'verapdf-lib/*' VeraBatch.java FLAVOUR FILE...
// prints, per file: "file<TAB>PATH<TAB>true|false|error", then one line
// "rule<TAB>CLAUSE-TEST<TAB>COUNT<TAB>DESCRIPTION" per failed rule.
import java.io.File;
import java.util.Map;
import java.util.TreeMap;
import org.verapdf.gf.foundry.VeraGreenfieldFoundryProvider;
import org.verapdf.pdfa.Foundries;
import org.verapdf.pdfa.PDFAParser;
import org.verapdf.pdfa.PDFAValidator;
import org.verapdf.pdfa.VeraPDFFoundry;
import org.verapdf.pdfa.flavours.PDFAFlavour;
import org.verapdf.pdfa.results.TestAssertion;
import org.verapdf.pdfa.results.ValidationResult;

public class VeraBatch {
    public static void main(String[] args) {
        VeraGreenfieldFoundryProvider.initialise();
        PDFAFlavour flavour = PDFAFlavour.byFlavourId(args[0]);
        VeraPDFFoundry foundry = Foundries.defaultInstance();
        for (int i = 1; i < args.length; i++) {
            try (PDFAParser parser = foundry.createParser(new File(args[i]), flavour)) {
                PDFAValidator validator = foundry.createValidator(flavour, false);
                ValidationResult result = validator.validate(parser);
                System.out.println("file\t" + args[i] + "\t" + result.isCompliant());
                Map<String, Integer> counts = new TreeMap<>();
                Map<String, String> texts = new TreeMap<>();
                for (TestAssertion a : result.getTestAssertions()) {
                    if (a.getStatus() != TestAssertion.Status.FAILED) {
                        continue;
                    }
                    String id = a.getRuleId().getClause() + "-" + a.getRuleId().getTestNumber();
                    counts.merge(id, 1, Integer::sum);
                    texts.putIfAbsent(id, a.getMessage().replace('\n', ' ').replace('\t', ' '));
                }
                for (Map.Entry<String, Integer> e : counts.entrySet()) {
                    System.out.println("rule\t" + e.getKey() + "\t" + e.getValue() + "\t" + texts.get(e.getKey()));
                }
            } catch (Exception e) {
                System.out.println("file\t" + args[i] + "\terror");
                System.out.println("rule\tparse\t1\t" + String.valueOf(e).replace('\n', ' '));
            }
        }
    }
}
