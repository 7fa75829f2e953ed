package jinstcheck;

import java.io.StringReader;

import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Document;
import org.xml.sax.InputSource;
import org.xml.sax.helpers.AttributesImpl;

/**
 * Uses the JDK's XML packages whose names are not the JDK's (org.xml.sax,
 * org.w3c.dom, from the boot loader), so the agent's default, which leaves
 * the JDK alone, can be seen to leave them alone too. Prints what it parsed.
 */
public class JdkXml {
	public static void main(String[] args) throws Exception {
		AttributesImpl attrs = new AttributesImpl();
		attrs.addAttribute("", "a", "a", "CDATA", "1");
		Document d = DocumentBuilderFactory.newInstance().newDocumentBuilder()
				.parse(new InputSource(new StringReader("<r><x/><x/></r>")));
		System.out.println(attrs.getLength() + " " + d.getElementsByTagName("x").getLength());
	}
}
